"""How the threads of ``zbtools mcp``'s own session take turns at reading.

As docs/mcp.md#start-up-and-the-cost-of-a-call says: the thread that reads a call runs it and
reads on after it; a watching thread takes the reading over only once a call has run for
``WATCH_DELAY``, and sleeps without waking once no call came for ``DOZE_AFTER``. Checked
in-process over pipes: quick calls wake no other thread, a long call still lets pings,
cancellations and other calls through, an idle watch sleeps, and, on generated mixes of calls,
pings and cancellations sent one at a time or all at once, every request gets exactly one
answer (a cancelled one at most one), calls that run alone answer in call order, and the
threads left over are bounded.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("mcp", reason="the mcp package (a default dependency) is not installed")

from tests.invariants.budget import invariant
from tests.surfaces.test_mcp_wire import Peer, call, session

PING_ANSWER: dict[str, Any] = {}


def session_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """The session's threads started since ``before`` was taken, still running."""
    return [t for t in threading.enumerate() if t.name == "zbtools-mcp" and t not in before]


@contextmanager
def answers(peer: Peer) -> Iterator[queue.Queue[dict[str, Any]]]:
    """The session's answers as they come, read by a thread (a read can then time out)."""
    found: queue.Queue[dict[str, Any]] = queue.Queue()

    def pump() -> None:
        try:
            while line := peer.inp.readline():
                found.put(json.loads(line))
        except (OSError, ValueError):
            pass

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    yield found


def test_sequential_quick_calls_run_on_the_thread_that_read_them(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.surfaces.mcp_calls import Runner

    (ws / "a.txt").write_text("alpha\n")
    ran_on: list[int] = []
    original = Runner.call

    def recording(self: Runner, *args: Any, **kwargs: Any) -> Any:
        ran_on.append(threading.get_ident())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Runner, "call", recording)
    before = set(threading.enumerate())
    with session(ws) as peer, answers(peer) as found:
        for request_id in range(1, 41):
            peer.send(call(request_id, "read_file", {"path": "a.txt"}))
            answer = found.get(timeout=5)
            assert answer["result"]["structuredContent"]["content"] == "alpha\n"
        assert len(set(ran_on)) == 1  # never handed to another thread
        assert len(session_threads(before)) <= 1  # the watch, and nothing else


def test_a_long_call_hands_the_reading_to_the_watch(ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    with session(ws) as peer, answers(peer) as found:
        peer.send(call(1, "run_command", {"command": "sleep 20"}))
        started = time.monotonic()
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert found.get(timeout=5) == {"jsonrpc": "2.0", "id": 2, "result": PING_ANSWER}
        peer.send(call(3, "read_file", {"path": "a.txt"}))
        assert found.get(timeout=5)["id"] == 3
        assert time.monotonic() - started < 5  # long before the command ends
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1}})
        peer.send({"jsonrpc": "2.0", "id": 4, "method": "ping"})
        assert found.get(timeout=5)["id"] == 4  # 1 gets no answer


def test_an_idle_watch_sleeps_until_the_next_call(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.surfaces import mcp_wire

    monkeypatch.setattr(mcp_wire, "DOZE_AFTER", 0.05)
    (ws / "a.txt").write_text("alpha\n")
    with session(ws) as peer, answers(peer) as found:
        peer.send(call(1, "read_file", {"path": "a.txt"}))
        assert found.get(timeout=5)["id"] == 1
        deadline = time.monotonic() + 10
        while not peer.server.dozing and time.monotonic() < deadline:
            time.sleep(0.01)
        assert peer.server.dozing
        peer.send(call(2, "run_command", {"command": "sleep 20"}))  # wakes it
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert found.get(timeout=5)["id"] == 3  # read by the woken watch while 2 runs
        assert not peer.server.dozing
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 2}})


# One step of a client: a quick read, a command that runs alone (seconds to sleep), a ping,
# or the cancellation of an earlier request (by its place among the requests sent).
STEP = st.one_of(
    st.just(("read",)),
    st.tuples(st.just("command"), st.sampled_from(["0", "0.01", "0.03"])),
    st.just(("ping",)),
    st.tuples(st.just("cancel"), st.integers(0, 20)),
)


@invariant(examples=6)
@given(steps=st.lists(STEP, min_size=1, max_size=12), burst=st.booleans())
def test_every_request_is_answered_once_whatever_the_mix(
        ws: Path, steps: list[tuple[Any, ...]], burst: bool) -> None:
    (ws / "a.txt").write_text("alpha\n")
    sent: list[tuple[int, str]] = []  # (id, kind) in sending order
    cancelled: set[int] = set()
    before = set(threading.enumerate())
    with session(ws) as peer, answers(peer) as found:
        got: dict[int, list[dict[str, Any]]] = {}

        def collect(until: set[int]) -> None:
            deadline = time.monotonic() + 20
            while not until <= got.keys():
                answer = found.get(timeout=max(0.01, deadline - time.monotonic()))
                got.setdefault(answer["id"], []).append(answer)

        for step in steps:
            request_id = len(sent) + 1
            if step[0] == "cancel":
                if sent:
                    target = sent[step[1] % len(sent)][0]
                    cancelled.add(target)
                    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": target}})
                continue
            if step[0] == "read":
                peer.send(call(request_id, "read_file", {"path": "a.txt"}))
            elif step[0] == "command":
                peer.send(call(request_id, "run_command", {"command": f"sleep {step[1]}"}))
            else:
                peer.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
            sent.append((request_id, step[0]))
            if not burst and request_id not in cancelled:
                collect({request_id})
        collect({i for i, _ in sent} - cancelled)
        time.sleep(0.05)  # a late second answer would come now
        while not found.empty():
            answer = found.get()
            got.setdefault(answer["id"], []).append(answer)
        for request_id, kind in sent:
            those = got.get(request_id, [])
            assert len(those) <= 1 if request_id in cancelled else len(those) == 1, those
            for answer in those:
                if kind == "ping":
                    assert answer["result"] == PING_ANSWER
                else:
                    result = answer["result"]
                    assert result["isError"] is False, result
                    if kind == "read":
                        assert result["structuredContent"]["content"] == "alpha\n"
        commands = [i for i, kind in sent if kind == "command" and i in got]
        order = sorted(commands, key=lambda i: list(got).index(i))
        assert order == commands  # calls that run alone answer in call order
        deadline = time.monotonic() + 10
        while len(session_threads(before)) > 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        # what ran the calls stopped: one thread reads (the first one, or one the watch
        # started), one watches
        assert len(session_threads(before)) <= 2
