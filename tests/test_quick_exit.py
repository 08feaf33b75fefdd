"""A process whose one call was of a read-only tool ends without tearing the interpreter down
(``entry.quick_exit``), and loses nothing by it: its whole output and its exit status (also
``--exit-status``'s) are those of the usual exit; with an ``atexit`` callback or a thread that
is not a daemon still to run, ``quick_exit`` returns and the usual exit runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import atexit, sys, threading, time
from zbtools.entry import quick_exit
print("written", end="")
if sys.argv[1] == "atexit":
    atexit.register(lambda: print(" atexit ran", end=""))
elif sys.argv[1] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.2), print(" thread ran", end=""))).start()
quick_exit(3)
print(" returned", end="")
"""


# stdout buffered, as in a harness (not -u), so that an unflushed write would be lost
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def test_what_is_left_to_run_at_exit_keeps_the_usual_exit() -> None:
    for case, out, code in (("none", "written", 3),
                            ("atexit", "written returned atexit ran", 0),
                            ("thread", "written returned thread ran", 0)):
        done = subprocess.run([sys.executable, "-c", PROBE, case], capture_output=True,
                              text=True, timeout=60, check=False, env=BUFFERED)
        assert (done.stdout, done.returncode) == (out, code), case


def test_a_read_only_call_ends_with_all_its_output_and_its_status(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(300):
        (ws / f"file{i:03}.py").write_text(f"def get_{i}(): ...\n")
    base = [sys.executable, "-m", "zbtools", "-w", str(ws)]
    listing = subprocess.run([*base, "list_directory", "--limit", "0"], capture_output=True,
                             text=True, timeout=60, check=False, env=BUFFERED)
    assert listing.returncode == 0 and listing.stderr == ""
    names = [e["name"] for e in json.loads(listing.stdout)["result"]["entries"]]
    assert names == [f"file{i:03}.py" for i in range(300)], names[:3]
    missed = subprocess.run([*base, "--exit-status", "grep_search", "--pattern", "absent_name",
                             "--format", "text"], capture_output=True, text=True, timeout=60,
                            check=False, env=BUFFERED)
    assert missed.returncode == 1 and missed.stderr == ""
