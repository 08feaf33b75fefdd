"""The files the edit corpus edits, and a byte-faithful model of a file's lines.

Three kinds of source (docs/internals/matching.md#corpus-sources):

* ``fixture:NAME`` - hand-written files under ``fixtures/`` (``NAME.fixture``; the suffix keeps
  ruff, mypy and pytest away from them). Plain UTF-8, LF, final newline.
* ``generated:NAME`` - files whose exact bytes matter (CRLF, mixed EOL, BOM, latin-1, a stray
  invalid byte, no final newline, trailing whitespace, form feeds) are built here from Python
  literals at run time, so no editor or git setting can normalise them.
* ``stdlib:PATH`` - files of the running Python's standard library, accepted only when their
  SHA-256 is on the allow-list below. A file that is missing or whose hash changed (another
  Python version) is skipped and recorded in ``Sources.skipped``; it never fails a test.
"""

from __future__ import annotations

import functools
import hashlib
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures"
BOM = b"\xef\xbb\xbf"

#: stdlib path (relative to ``sysconfig.get_paths()['stdlib']``) -> SHA-256 on CPython 3.11.7.
STDLIB_ALLOW_LIST: dict[str, str] = {
    "bisect.py": "e5b2ff166f48a06e70ae831d8c9b47283fcd0c254306eee12d3dae9c55e11526",
    "colorsys.py": "d9800f8e81d46e63ca6f2e7d6ac5f344d85afb92c3cf6d103b5f977f1ad66ac2",
    "sched.py": "edfb309483d7cb05e06ad86d1fdeb819629f71402dc6710a1bec36c7afcaac50",
    "graphlib.py": "7bd338c5a475d1101064603d3baa5507446d3c5e73f741f6d6e77c6204c1eb65",
    "string.py": "24aeae1f0526250f442022022bf98df9a823b1cb330543ee79e70e44907462e9",
    "shlex.py": "42ab6060f316e121e374e6621d8c1c98b8db323903c3df289a810c45a8ae46a7",
    "json/decoder.py": "9f02654649816145bc76f8c210a5fe3ba1de142d4d97a1c93105732e747c285b",
    "json/encoder.py": "7c358788fbb2a6a07f66f1f8446c52396f35fc201108f666d5be002d86f31af2",
    "csv.py": "6c68a5186e3b85e6e267a7ef96479327a45ae2b40bf5e9f2017e4b2282b3f5b1",
    "textwrap.py": "62867e40cdea6669b361f72af4d7daf0359f207c92cbeddfc7c7506397c1f31c",
    "heapq.py": "6d43277e5c76fc0f073cd388fcff852d14d068f6bb6d4886c340f8b75a1229a9",
    "gettext.py": "a5c249a522b6b8e3aa6f1b12a8bcc09508b99ad612b58d2fc973db27ea3b7cc3",
    "pprint.py": "0b67dbc8af449d8ced3acd9df902e98c2dbc56c8f2a7a181c51cc72768db621f",
    "tokenize.py": "79aa94ebe1761811ea9b2da2ada409a8cb9abd7c6eac241d0c181a36684bb609",
    "fractions.py": "b11e850e354808b882d13a70a911c29accd1dbdd41757566704e3b7206c74edb",
    "calendar.py": "b3b140864fd122a575ffcc9342b824fbe4f8a38fdf3f4fcd964f26e52725358f",
    "functools.py": "6d80018a3fa9fed44c5b78f881987ee3ab3fb1238b077b4e6dcb4b76da7db73b",
    "smtplib.py": "b154e27998d0ef0b32fcc665299cdb30883ffe039ede3c4faac3a9db6618d35d",
    "configparser.py": "4a70cecccb55031a413b79e6ced2e63ca031f770cd25a4882980ecdeab67f6ff",
    "statistics.py": "889a066f1b8063e73387ceb84018efc507a89b365b56c6afb9cc15b2ed25c2d9",
    "dataclasses.py": "4b7e1c99ebea53b546317d218a0261895a1769f83a6b95dc0136f13578066a7f",
    "shutil.py": "d0dbfcd96ba06684aaf5d55e941aaaf36bb3a22cf537ea9d46317b363bcc5792",
    "difflib.py": "0c6afc23568d55b3e9ac914f9c5361e3033e778aa5b58d3cc82835fc5c638679",
    "argparse.py": "dc1eba8adfdf615986421f981337458ba1072d3e718a0f76e3224940fd74118b",
    "typing.py": "115d96e966bf35cf97126f98dd1fa854a00dd832733fc01ede58cfd4fa490660",
    "_pydecimal.py": "14cf1bf7ead78a0beb578f19ebc4ec82f542e0879f5b77d327f01abf74591586",
    "email/_header_value_parser.py":
        "f4fe84dcd279f58ef04a9763cde87947fc6358a112ef2953f40b04b5a9058c9c",
    "distutils/tests/xxmodule.c":
        "0a3bcc0446de7d7092d3b36b4b908c2aa7278c91188d399faa6e511df87daee8",
    "LICENSE.txt": "3b2f81fe21d181c499c59a256c8e1968455d6689d269aa85373bfb6af41da3bf",
}

KIND_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".go": "go", ".c": "c", ".h": "c", ".cs": "c", ".sh": "shell",
    ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".md": "markdown", ".tex": "latex",
    ".txt": "text", ".ini": "text",
}


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def kind_of(name: str) -> str:
    return KIND_BY_SUFFIX.get(Path(name).suffix, "text")


# --------------------------------------------------------------------------------------------
# The file model


@dataclass(frozen=True)
class FileModel:
    """A file split the way docs/internals/matching.md#file-model does: on ``\\n`` only, ``\\r``
    before it is the EOL.

    ``lines[i]`` is the content of line ``i + 1`` without its ending, ``eols[i]`` is ``"\\n"``,
    ``"\\r\\n"`` or ``""`` (the last line of a file without a final newline). A lone ``\\r`` is
    content. Text is UTF-8 with ``surrogateescape``, so every byte string round-trips.
    """

    raw: bytes
    bom: bytes
    lines: tuple[str, ...]
    eols: tuple[str, ...]

    @staticmethod
    def parse(raw: bytes) -> FileModel:
        bom = BOM if raw.startswith(BOM) else b""
        text = raw[len(bom):].decode("utf-8", "surrogateescape")
        parts = text.split("\n")
        lines: list[str] = []
        eols: list[str] = []
        last = parts.pop()
        for part in parts:
            if part.endswith("\r"):
                lines.append(part[:-1])
                eols.append("\r\n")
            else:
                lines.append(part)
                eols.append("\n")
        if last:
            lines.append(last)
            eols.append("")
        return FileModel(raw, bom, tuple(lines), tuple(eols))

    @property
    def final_newline(self) -> bool:
        return not self.eols or self.eols[-1] != ""

    @functools.cached_property
    def majority_eol(self) -> str:
        crlf = sum(1 for e in self.eols if e == "\r\n")
        lf = sum(1 for e in self.eols if e == "\n")
        return "\r\n" if crlf >= lf and crlf > 0 else "\n"

    @functools.cached_property
    def lf_view(self) -> str:
        return "".join(line + ("\n" if eol else "") for line, eol in zip(self.lines, self.eols,
                                                                          strict=True))

    @functools.cached_property
    def byte_starts(self) -> tuple[int, ...]:
        """Byte offset (in ``raw``, BOM included) where each line starts, plus ``len(raw)``."""
        out = [len(self.bom)]
        pos = len(self.bom)
        for line, eol in zip(self.lines, self.eols, strict=True):
            pos += len((line + eol).encode("utf-8", "surrogateescape"))
            out.append(pos)
        return tuple(out)

    @functools.cached_property
    def indent_unit(self) -> str:
        """``"\\t"`` when tab-led indentation dominates, else 2, 4 or 8 spaces."""
        tabs = spaces = 0
        widths: list[int] = []
        for line in self.lines:
            if not line.strip():
                continue
            if line.startswith("\t"):
                tabs += 1
            elif line.startswith(" "):
                spaces += 1
                lead = len(line) - len(line.lstrip(" "))
                if line[lead:lead + 1] != "\t":
                    widths.append(lead)
        if tabs >= spaces and tabs > 0:
            return "\t"
        for unit in (4, 2, 8):
            if widths and sum(1 for w in widths if w % unit == 0) >= 0.8 * len(widths):
                return " " * unit
        return "    "

    @functools.cached_property
    def valid_utf8(self) -> bool:
        try:
            self.raw[len(self.bom):].decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    def line_is_plain(self, index: int) -> bool:
        """Line ``index`` (0-based) holds no undecodable byte and no lone CR."""
        line = self.lines[index]
        return "\r" not in line and not any("\udc80" <= ch <= "\udcff" for ch in line)


def encode_text(text: str, bom: bytes) -> bytes:
    return bom + text.encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class LineReplacement:
    """Replace lines ``start..end`` (1-based, inclusive) by ``text`` (EOLs included).

    ``end == start - 1`` inserts before line ``start`` (``start`` may be ``len(lines) + 1``).
    """

    start: int
    end: int
    text: str

    def to_json(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "text": self.text}

    @staticmethod
    def from_json(data: dict[str, object]) -> LineReplacement:
        start, end, text = data["start"], data["end"], data["text"]
        assert isinstance(start, int) and isinstance(end, int) and isinstance(text, str)
        return LineReplacement(start, end, text)


def apply_replacements(raw: bytes, reps: Sequence[LineReplacement]) -> bytes:
    """Apply non-overlapping line replacements (given in any order) to ``raw``."""
    fm = FileModel.parse(raw)
    chunks = [line + eol for line, eol in zip(fm.lines, fm.eols, strict=True)]
    for rep in sorted(reps, key=lambda r: (r.start, r.end), reverse=True):
        assert 1 <= rep.start <= len(chunks) + 1 and rep.start - 1 <= rep.end <= len(chunks), rep
        chunks[rep.start - 1:rep.end] = [rep.text]
    return encode_text("".join(chunks), fm.bom)


# --------------------------------------------------------------------------------------------
# Sources


@dataclass(frozen=True)
class Source:
    key: str  # "fixture:server.go", "generated:crlf_service.cs", "stdlib:json/decoder.py"
    name: str  # the file name written into the test workspace
    kind: str  # python | go | c | shell | yaml | json | markdown | latex | text
    raw: bytes
    origin: str  # fixture | generated | stdlib
    tags: frozenset[str] = frozenset()

    @property
    def sha256(self) -> str:
        return sha256_hex(self.raw)

    @functools.cached_property
    def model(self) -> FileModel:
        return FileModel.parse(self.raw)


@dataclass
class Sources:
    by_key: dict[str, Source] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # stdlib path -> reason

    def add(self, source: Source) -> None:
        assert source.key not in self.by_key, source.key
        self.by_key[source.key] = source

    def __getitem__(self, key: str) -> Source:
        return self.by_key[key]

    def all(self) -> list[Source]:
        return list(self.by_key.values())

    def tagged(self, tag: str) -> list[Source]:
        return [s for s in self.by_key.values() if tag in s.tags]


def _lines(*rows: str, eol: str = "\n", final: bool = True) -> str:
    return eol.join(rows) + (eol if final else "")


def generated_fixtures() -> list[Source]:
    """Byte-exact fixtures, built from literals so no tool can normalise their bytes."""
    out: list[Source] = []

    def add(name: str, raw: bytes, *tags: str) -> None:
        out.append(Source(f"generated:{name}", name, kind_of(name), raw, "generated",
                          frozenset(tags)))

    # A C#-like file with CRLF everywhere.
    crlf = _lines(
        "using System;",
        "using System.Collections.Generic;",
        "",
        "namespace Billing",
        "{",
        "    public sealed class InvoiceService",
        "    {",
        "        private readonly Dictionary<string, decimal> _rates = new();",
        "        private int _issued;",
        "",
        "        public InvoiceService(decimal defaultRate)",
        "        {",
        "            _rates[\"default\"] = defaultRate;",
        "            _issued = 0;",
        "        }",
        "",
        "        public decimal Total(string customer, int hours)",
        "        {",
        "            if (hours < 0)",
        "            {",
        "                throw new ArgumentOutOfRangeException(nameof(hours));",
        "            }",
        "            var rate = _rates.TryGetValue(customer, out var r) ? r : _rates[\"default\"];",
        "            _issued++;",
        "            return rate * hours;",
        "        }",
        "",
        "        public void SetRate(string customer, decimal rate)",
        "        {",
        "            if (rate <= 0)",
        "            {",
        "                throw new ArgumentOutOfRangeException(nameof(rate));",
        "            }",
        "            _rates[customer] = rate;",
        "        }",
        "",
        "        public string Describe() => $\"{_issued} invoices, {_rates.Count} rates\";",
        "    }",
        "}",
        eol="\r\n")
    add("crlf_service.cs", crlf.encode(), "crlf")

    # Mixed line endings: LF file whose middle function uses CRLF (a pasted block).
    head = _lines(
        '"""Mixed line endings: most lines end in LF, one pasted function in CRLF."""',
        "",
        "import os",
        "",
        "",
        "def read_config(path):",
        "    with open(path, encoding=\"utf-8\") as handle:",
        "        text = handle.read()",
        "    pairs = {}",
        "    for line in text.splitlines():",
        "        if not line or line.startswith(\"#\"):",
        "            continue",
        "        key, _, value = line.partition(\"=\")",
        "        pairs[key.strip()] = value.strip()",
        "    return pairs",
        "",
        "")
    middle = _lines(
        "def write_config(path, pairs):",
        "    lines = [f\"{key} = {value}\" for key, value in sorted(pairs.items())]",
        "    tmp = path + \".tmp\"",
        "    with open(tmp, \"w\", encoding=\"utf-8\") as handle:",
        "        handle.write(\"\\n\".join(lines) + \"\\n\")",
        "    os.replace(tmp, path)",
        "",
        "",
        eol="\r\n")
    tail = _lines(
        "def merge_config(base, override):",
        "    merged = dict(base)",
        "    for key, value in override.items():",
        "        if value is None:",
        "            merged.pop(key, None)",
        "        else:",
        "            merged[key] = value",
        "    return merged",
        "",
        "",
        "def config_path(name):",
        "    home = os.environ.get(\"HOME\", \"/tmp\")",
        "    return os.path.join(home, \".config\", name + \".conf\")")
    add("mixed_eol.py", (head + middle + tail).encode(), "mixed_eol")

    # UTF-8 BOM, LF.
    bom_py = _lines(
        "# -*- coding: utf-8 -*-",
        "\"\"\"A module saved by an editor that writes a byte-order mark.\"\"\"",
        "",
        "GREETING = \"héllo wörld\"",
        "",
        "",
        "def greet(name):",
        "    if not name:",
        "        name = \"stranger\"",
        "    return f\"{GREETING}, {name}!\"",
        "",
        "",
        "def shout(name):",
        "    return greet(name).upper()")
    add("bom_module.py", BOM + bom_py.encode(), "bom")

    # UTF-8 BOM and CRLF (the Visual Studio default).
    bom_cs = _lines(
        "namespace Tools",
        "{",
        "    public static class Program",
        "    {",
        "        public static int Main(string[] args)",
        "        {",
        "            if (args.Length == 0)",
        "            {",
        "                System.Console.Error.WriteLine(\"usage: tools <command>\");",
        "                return 2;",
        "            }",
        "            System.Console.WriteLine($\"running {args[0]}\");",
        "            return 0;",
        "        }",
        "    }",
        "}",
        eol="\r\n")
    add("bom_program.cs", BOM + bom_cs.encode(), "bom", "crlf")

    # latin-1 (cp1252-compatible) text: the accented bytes are single bytes.
    latin = _lines(
        "Inventaire du dépôt - printemps",
        "================================",
        "",
        "Article: café moulu, 250 g",
        "Quantité: 40",
        "Emplacement: allée 3, étagère B",
        "",
        "Article: thé vert, 100 g",
        "Quantity: 25",
        "Location: aisle 4, shelf A",
        "",
        "Article: sugar cubes, 1 kg",
        "Quantity: 12",
        "Location: aisle 4, shelf C",
        "",
        "Notes:",
        "- reorder when below 10",
        "- check expiry dates every month",
        "- contact: Müller GmbH, Zürich")
    add("latin1_stock.txt", latin.encode("latin-1"), "latin1")

    # UTF-8 with one stray latin-1 byte in a comment (and valid UTF-8 elsewhere).
    stray = (
        "# Price list \u2013 generated by an old tool that wrote one byte in latin-1:\n"
        "# caf\udce9 au lait\n"
        "\n"
        "PRICES = {\n"
        "    \"espresso\": 2.10,\n"
        "    \"cappuccino\": 3.20,\n"
        "    \"latte\": 3.40,\n"
        "}\n"
        "\n"
        "\n"
        "def price(name, size=\"regular\"):\n"
        "    base = PRICES[name]\n"
        "    if size == \"large\":\n"
        "        base += 0.60\n"
        "    return round(base, 2)\n"
        "\n"
        "\n"
        "def menu():\n"
        "    return sorted(PRICES)\n")
    add("stray_byte.py", stray.encode("utf-8", "surrogateescape"), "latin1")

    # No final newline (Python and Markdown).
    nofinal_py = _lines(
        "def clamp(value, low, high):",
        "    if value < low:",
        "        return low",
        "    if value > high:",
        "        return high",
        "    return value",
        "",
        "",
        "def lerp(a, b, t):",
        "    t = clamp(t, 0.0, 1.0)",
        "    return a + (b - a) * t",
        "",
        "",
        "def remap(value, src_low, src_high, dst_low, dst_high):",
        "    span = src_high - src_low",
        "    t = (value - src_low) / span",
        "    return lerp(dst_low, dst_high, t)",
        final=False)
    add("no_final_newline.py", nofinal_py.encode(), "no_final_newline")
    nofinal_md = _lines(
        "# Release checklist",
        "",
        "- bump the version in `pyproject.toml`",
        "- update the changelog",
        "- tag the release: `git tag v1.4.0`",
        "- push the tag and wait for CI",
        "- announce on the mailing list",
        final=False)
    add("no_final_newline.md", nofinal_md.encode(), "no_final_newline")

    # Trailing whitespace and whitespace-only blank lines (opencode #45199's blank middle lines).
    trailing = (
        "class Cache:  \n"
        "    def __init__(self, size):\n"
        "        self.size = size   \n"
        "        self.data = {}\n"
        "    \n"
        "        self.hits = 0\t\n"
        "        self.misses = 0\n"
        "\n"
        "    def get(self, key):  \n"
        "        if key in self.data:\n"
        "            self.hits += 1\n"
        "            return self.data[key]  \n"
        "        \n"
        "        self.misses += 1\n"
        "        return None\n"
        "    \n"
        "    def put(self, key, value):\n"
        "        if len(self.data) >= self.size:\n"
        "            self.data.pop(next(iter(self.data)))\n"
        "        self.data[key] = value \n")
    add("trailing_ws.py", trailing.encode(), "trailing_ws")

    # Form feeds, a Unicode line separator inside a string, a lone CR inside a comment.
    special = (
        "\"\"\"Sections separated by form feeds, as some stdlib modules do.\"\"\"\n"
        "\n"
        "SEPARATOR = \"a\u2028b\"\n"
        "\x0c\n"
        "def first(items):\n"
        "    for item in items:\n"
        "        return item\n"
        "    return None\n"
        "\x0c\n"
        "def last(items):\n"
        "    result = None\n"
        "    for item in items:\n"
        "        result = item\n"
        "    return result\n"
        "\x0c\n"
        "# a comment with a lone\rcarriage return\n"
        "def count(items):\n"
        "    return sum(1 for _ in items)\n")
    add("special_chars.py", special.encode(), "special")
    return out


def big_file(lines: int = 12_500) -> Source:
    """A deterministic Python file of about ``lines`` lines (agent-os #439's 12.5k-line miss)."""
    rows: list[str] = ['"""Generated: many similar functions."""', ""]
    n = 0
    while len(rows) < lines:
        rows += [
            "",
            f"def handler_{n:05d}(request, context):",
            f"    value = request.get('field_{n % 97}', {n})",
            "    if value is None:",
            f"        raise ValueError('missing field_{n % 97}')",
            f"    context.log('handler_{n:05d}', value)",
            f"    return value * {n % 13 + 1}",
        ]
        n += 1
    text = "\n".join(rows[:lines]) + "\n"
    return Source("generated:big_handlers.py", "big_handlers.py", "python", text.encode(),
                  "generated", frozenset({"big"}))


def committed_fixtures() -> list[Source]:
    out = []
    for path in sorted(FIXTURE_DIR.glob("*.fixture")):
        name = path.name.removesuffix(".fixture")
        raw = path.read_bytes()
        tags = {"tabs"} if b"\n\t" in raw else set()
        out.append(Source(f"fixture:{name}", name, kind_of(name), raw, "fixture", frozenset(tags)))
    return out


def stdlib_sources(allow_list: dict[str, str] | None = None) -> tuple[list[Source], dict[str, str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found: list[Source] = []
    skipped: dict[str, str] = {}
    for rel, digest in (allow_list if allow_list is not None else STDLIB_ALLOW_LIST).items():
        path = root / rel
        try:
            raw = path.read_bytes()
        except OSError as exc:
            skipped[rel] = f"unreadable: {exc.strerror or exc}"
            continue
        actual = sha256_hex(raw)
        if actual != digest:
            skipped[rel] = f"sha256 changed ({actual[:12]} != {digest[:12]})"
            continue
        name = rel.replace("/", "__")
        found.append(Source(f"stdlib:{rel}", name, kind_of(name), raw, "stdlib", frozenset()))
    return found, skipped


@functools.cache
def load_sources(*, stdlib: bool = True, big: bool = False) -> Sources:
    sources = Sources()
    for source in committed_fixtures() + generated_fixtures():
        sources.add(source)
    if stdlib:
        found, skipped = stdlib_sources()
        for source in found:
            sources.add(source)
        sources.skipped.update(skipped)
    if big:
        sources.add(big_file())
    return sources
