"""Per-language accuracy of the definitions ``read_symbols`` finds, against universal-ctags.

The corpus is real files from public repositories, a few per language, with their licences
(``benchmarks/corpus/code/<language>/<repository>/``; ``SOURCES.md`` there lists each file's
repository, path, commit and licence, and how to fetch them: the copies are not committed). For
each
file, the definitions ``read_symbols`` finds are compared with those universal-ctags (5.9, at
``/usr/bin/ctags``; a benchmark oracle, not a test dependency) lists, matched by name and line:

* **both**: the same name on the same line; or the same name with ctags' line inside our
  definition's lines (``line differs``: ctags gives the line of the name, we the line where the
  definition starts: a Java annotation, a C++ ``template<...>`` line, a C return type written
  on the line above);
* **only ctags**: a ctags definition we do not list (a miss, unless the kind table below says
  why it is not a definition for us);
* **only us**: a definition ctags does not list (invented, unless explained).

ctags lists more than definitions with bodies: struct fields, variables, prototypes, enum
members, imports. ``KINDS`` maps each ctags kind to ours, or to None with the reason it is not
counted; those are reported apart, per kind, never as misses. Kinds are compared too (ctags'
kind mapped to ours), and each kind that differs is listed.

    .venv/bin/python benchmarks/code_accuracy.py            # the table
    .venv/bin/python benchmarks/code_accuracy.py --details  # and every unmatched definition
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "benchmarks" / "corpus" / "code"
CTAGS = "/usr/bin/ctags"
NOT_SOURCE = ("LICENSE", "COPYING", "SOURCES", "Cargo.toml", "README")

# corpus folder -> ctags' name for the language (TSX: ctags' TypeScript reader, forced)
CTAGS_LANGUAGE = {
    "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TypeScript", "go": "Go",
    "rust": "Rust", "java": "Java", "c": "C", "cpp": "C++", "c_sharp": "C#", "ruby": "Ruby",
    "php": "PHP", "bash": "Sh",
}

# why a ctags kind is not a definition for us (a definition holds code, or names a type)
FIELD = "a field or member: data inside a type, not a definition with a body"
VARIABLE = "a variable: data, not a definition (a variable holding a function is one)"
ENUMERATOR = "an enum member: a value, listed with its enum"
IMPORT = "an import or package clause: a name used, not defined here"
MACRO = "a preprocessor macro: not part of the parse tree's definitions"
CONSTANT = "a constant: data (Python's module constants are the exception, as ast lists them)"

# per language: ctags kind (long name) -> our kind, or None and why it is not counted
KINDS: dict[str, dict[str, str | tuple[None, str]]] = {
    "javascript": {"class": "class", "method": "method", "function": "function",
                   "generator": "function", "getter": "method", "setter": "method",
                   "field": (None, FIELD), "property": (None, FIELD),
                   "variable": (None, VARIABLE), "constant": (None, CONSTANT)},
    "typescript": {"class": "class", "method": "method", "function": "function",
                   "generator": "function", "interface": "interface", "enum": "enum",
                   "namespace": "module", "alias": "type",
                   "property": (None, FIELD), "variable": (None, VARIABLE),
                   "constant": (None, CONSTANT), "enumerator": (None, ENUMERATOR)},
    "go": {"func": "function", "struct": "type", "interface": "type", "type": "type",
           "talias": "type", "methodSpec": "method",
           "member": (None, FIELD), "anonMember": (None, FIELD), "var": (None, VARIABLE),
           "const": (None, CONSTANT), "package": (None, IMPORT),
           "packageName": (None, IMPORT), "unknown": (None, IMPORT)},
    "rust": {"function": "function", "method": "method", "struct": "class", "enum": "enum",
             "interface": "interface", "module": "module", "macro": "macro",
             "typedef": "type",
             "implementation": (None, "an impl block: a scope for methods (they are named "
                                "Type.method), not a definition"),
             "field": (None, FIELD), "enumerator": (None, ENUMERATOR),
             "variable": (None, VARIABLE)},
    "java": {"class": "class", "interface": "interface", "enum": "enum", "method": "method",
             "annotation": "interface",
             "field": (None, FIELD), "enumConstant": (None, ENUMERATOR),
             "package": (None, IMPORT)},
    "c": {"function": "function", "struct": "class", "union": "class", "enum": "enum",
          "typedef": "type",
          "macro": (None, MACRO), "member": (None, FIELD), "variable": (None, VARIABLE),
          "enumerator": (None, ENUMERATOR), "header": (None, IMPORT),
          "prototype": (None, "a prototype: a declaration without a body")},
    "cpp": {"function": "function", "class": "class", "struct": "class", "union": "class",
            "enum": "enum", "namespace": "module", "typedef": "type",
            "macro": (None, MACRO), "member": (None, FIELD), "variable": (None, VARIABLE),
            "enumerator": (None, ENUMERATOR), "header": (None, IMPORT),
            "prototype": (None, "a prototype: a declaration without a body")},
    "c_sharp": {"class": "class", "interface": "interface", "struct": "class", "enum": "enum",
                "method": "method", "property": "property", "namespace": "module",
                "event": (None, FIELD), "field": (None, FIELD),
                "enumerator": (None, ENUMERATOR), "macro": (None, MACRO)},
    "ruby": {"class": "class", "module": "module", "method": "method",
             "singletonMethod": "method",
             "accessor": (None, "attr_reader/attr_accessor: generated accessors, no body"),
             "alias": (None, "an alias of a method defined elsewhere"),
             "constant": (None, CONSTANT), "library": (None, IMPORT)},
    "php": {"class": "class", "interface": "interface", "trait": "interface",
            "function": "function", "namespace": "module",
            "variable": (None, VARIABLE), "define": (None, CONSTANT),
            "alias": (None, IMPORT)},
    "bash": {"function": "function",
             "heredoc": (None, "a here-document's marker: text, not code"),
             "script": (None, IMPORT), "alias": (None, VARIABLE)},
}
KINDS["tsx"] = KINDS["typescript"]
# ctags' names for functions without one (JavaScript's `set: function (...) {}` in an object)
ANONYMOUS = ("AnonymousFunction", "__anon")

# The systematic differences, each checked by hand on the corpus: (languages, side, our or
# ctags' kind, a pattern the definition's line matches, why). "ctags" entries are ctags'
# mistakes or ctags' broader idea of a definition; "ours" entries are definitions ctags' reader
# does not see, or a choice of the grammar's own tags query.
TS = ("typescript", "tsx")
EXPLAINED: list[tuple[tuple[str, ...], str, str, str, str]] = [
    (TS, "ctags", "type", r"^\s*(import|export)\b|^\s*type \w+,?$|^\s*\w+,$",
     "ctags lists a name in `import { type X }` or `export { type X }` as a type alias: an "
     "import or re-export, not a definition"),
    (("javascript",), "ctags", "method", r"^\s*constructor\(",
     "the grammar's own JavaScript query leaves `constructor` out (so does aider's repo map); "
     "the class holds it"),
    (("javascript",), "ctags", "class", r"^\s*[\w.]+ = \{$",
     "ctags reads an object literal assigned to a property (`this.x = {`) as a class"),
    (("javascript",), "ctags", "", r"\.prototype\[",
     "ctags reads `Axios.prototype[name] = function` as a class and a function named Axios"),
    (("rust",), "ctags", "method", r"^\s*fn \w+\(.*;$",
     "a trait's method without a body (`fn ino(&self) -> u64;`) is a declaration; the trait "
     "is listed"),
    (("bash",), "ctags", "function", r"^\s*\w+=\(\)",
     "ctags reads an empty array assignment `X=()` as a function"),
    (TS, "ours", "method", r"^\s*(get|set) \w+\(",
     "ctags' TypeScript reader lists no accessors (`get value()`, `set value(v)`)"),
    (TS, "ours", "", r"^\s*\w+: (\(.*\) =>|function)",
     "a function-valued property of an object literal (`get: (t, k) => ...`): a function for "
     "the grammar's JavaScript query, nothing for ctags"),
    (TS, "ours", "method", r"^\s*update\(\): boolean \{$",
     "a plain method ctags' TypeScript reader skips after a setter with a nested block"),
    (TS, "ours", "function", r"^\s*const \w+ = \(.*\) =>",
     "a local arrow function bound to a const inside a function: a definition for the "
     "JavaScript query, ctags lists top-level ones only"),
    (("c_sharp",), "ours", "method", r"^\s*internal override \w+ \w+\(JToken\? item\)$",
     "ctags' C# reader misses these `internal override` methods taking a nullable "
     "`JToken? item` (others like them it finds): they are methods"),
]

OVERLOADS = ("a TypeScript function with overload signatures: each signature and the "
             "implementation are listed, as a reader looks for any of them; ctags lists one")

# our methods are ctags' functions where ctags does not tell methods apart
SAME_KIND = {("function", "method"), ("method", "function")}


class Entry:
    __slots__ = ("end", "kind", "line", "name")

    def __init__(self, name: str, line: int, kind: str, end: int) -> None:
        self.name = name
        self.line = line
        self.kind = kind
        self.end = end


def ours(path: Path, language: str) -> list[Entry]:
    sys.path.insert(0, str(REPO))
    from zbtools.core.code.languages import language_for
    from zbtools.core.code.symbols import read_symbols

    data = path.read_bytes()
    found = language_for(str(path), data[:256])
    if found is None or found.name != language:
        raise SystemExit(f"{path}: read as {found}, not {language}")
    return [Entry(d.name, d.start_line, d.kind, d.end_line)
            for d in read_symbols(found, data).definitions]


def theirs(path: Path, language: str) -> list[tuple[str, int, str]]:
    done = subprocess.run(
        [CTAGS, "--output-format=json", "--fields=+nKe", f"--language-force="
         f"{CTAGS_LANGUAGE[language]}", "-f", "-", str(path)],
        capture_output=True, text=True, check=True)
    out = []
    for line in done.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag":
            out.append((tag["name"], int(tag["line"]), tag["kind"]))
    return out


class Tally:
    def __init__(self) -> None:
        self.files = 0
        self.lines = 0
        self.both = 0
        self.line_differs = 0
        self.kind_differs: collections.Counter[str] = collections.Counter()
        self.only_ctags: list[str] = []
        self.only_us: list[str] = []
        self.excluded: collections.Counter[str] = collections.Counter()
        # ours, where ctags lists the same name and line under a kind it does not count
        self.uncounted_ours: collections.Counter[str] = collections.Counter()
        # one side only, for a reason in EXPLAINED
        self.explained: collections.Counter[str] = collections.Counter()


def compare(path: Path, language: str, tally: Tally) -> None:
    table = KINDS[language]
    mine = ours(path, language)
    wanted: list[tuple[str, int, str]] = []
    uncounted: dict[tuple[str, int], str] = {}
    for name, line, kind in theirs(path, language):
        mapped = table.get(kind)
        if mapped is None:
            raise SystemExit(f"{path}: ctags kind {kind!r} has no row in KINDS[{language!r}]")
        if name.startswith(ANONYMOUS) and kind not in ("function", "method"):
            mapped = (None, "anonymous (a C++ `namespace {`, an `enum {`): nothing to name")
        if isinstance(mapped, tuple):
            tally.excluded[kind] += 1
            uncounted[(name, line)] = kind
        elif not name.startswith(ANONYMOUS):
            wanted.append((name, line, mapped))
        else:
            wanted.append(("", line, mapped))  # matched by line alone
    rel = path.relative_to(CORPUS)
    unmatched = list(mine)
    pairs: list[tuple[tuple[str, int, str], Entry]] = []
    missed: list[tuple[str, int, str]] = []
    # exact (name, line) first, so that a constructor named as its class never takes the
    # class's place in the second pass
    for item in wanted:
        name, line, _ = item
        exact = next((e for e in unmatched if e.line == line and same_name(e.name, name)), None)
        if exact is None:
            missed.append(item)
        else:
            unmatched.remove(exact)
            pairs.append((item, exact))
    still: list[tuple[str, int, str]] = []
    for item in missed:
        name, line, _ = item
        holding = [e for e in unmatched if same_name(e.name, name) and e.line <= line <= e.end]
        if not holding:
            still.append(item)
            continue
        near = min(holding, key=lambda e: line - e.line)
        unmatched.remove(near)
        pairs.append((item, near))
        tally.line_differs += 1
    for (_, _, kind), entry in pairs:
        tally.both += 1
        if entry.kind != kind and (entry.kind, kind) not in SAME_KIND:
            tally.kind_differs[f"ctags {kind} / ours {entry.kind}"] += 1
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    for name, line, kind in still:
        why = explained(language, "ctags", kind, lines[line - 1])
        if why is not None:
            tally.explained[why] += 1
        else:
            tally.only_ctags.append(f"{rel}:{line} {kind} {name}")
    names = collections.Counter(e.name for e in mine)
    for e in unmatched:
        theirs_kind = uncounted.get((e.name, e.line))
        why = explained(language, "ours", e.kind, lines[e.line - 1])
        if language in TS and e.kind == "function" and names[e.name] > 1:
            why = OVERLOADS
        if theirs_kind is not None:
            tally.uncounted_ours[f"ctags {theirs_kind} / ours {e.kind}"] += 1
        elif why is not None:
            tally.explained[why] += 1
        else:
            tally.only_us.append(f"{rel}:{e.line} {e.kind} {e.name}")
    tally.files += 1
    tally.lines += path.read_bytes().count(b"\n")


def explained(language: str, side: str, kind: str, line: str) -> str | None:
    """The reason for a known systematic difference, if the definition is one."""
    for languages, who, which, pattern, why in EXPLAINED:
        if (language in languages and who == side and which in ("", kind)
                and re.search(pattern, line)):
            return why
    return None


def same_name(ours: str, theirs: str) -> bool:
    """``theirs`` empty: ctags named an anonymous function, matched by line alone; C#'s
    ``IEnumerable.GetEnumerator`` (an explicit interface implementation) is our
    ``GetEnumerator``."""
    return not theirs or ours == theirs or ours == theirs.rsplit(".", 1)[-1]


def sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not any(word in p.name for word in NOT_SOURCE))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--details", action="store_true",
                        help="list every definition found by one side only")
    args = parser.parse_args()
    if shutil.which(CTAGS) is None:
        print(f"{CTAGS} not found: install universal-ctags", file=sys.stderr)
        return 2
    if not CORPUS.is_dir() or not any(CORPUS.iterdir()):
        print(f"no corpus in {CORPUS} (see SOURCES.md there)", file=sys.stderr)
        return 2
    print("| language | files | lines | ctags defs | both | line differs | only ctags | "
          "only us | explained | kinds differ | ours, an uncounted kind to ctags | "
          "ctags kinds not counted |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
    details: list[str] = []
    reasons: dict[str, int] = {}
    for language in CTAGS_LANGUAGE:
        folder = CORPUS / language
        if not folder.is_dir():
            continue
        tally = Tally()
        for path in sources(folder):
            compare(path, language, tally)
        total = tally.both + len(tally.only_ctags)
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(tally.kind_differs.items())) or "-"
        excluded = ", ".join(f"{k} {n}" for k, n in sorted(tally.excluded.items())) or "-"
        theirs_kind = ", ".join(f"{k} ({n})" for k, n in sorted(tally.uncounted_ours.items())) \
            or "-"
        marks = []
        for why, n in tally.explained.items():
            number = reasons.setdefault(why, len(reasons) + 1)
            marks.append(f"{n} [{number}]")
        print(f"| {language} | {tally.files} | {tally.lines} | {total} | {tally.both} | "
              f"{tally.line_differs} | {len(tally.only_ctags)} | {len(tally.only_us)} | "
              f"{', '.join(marks) or '-'} | {kinds} | {theirs_kind} | {excluded} |")
        details += [f"only ctags  {x}" for x in tally.only_ctags]
        details += [f"only us     {x}" for x in tally.only_us]
    if reasons:
        print()
        for why, number in reasons.items():
            print(f"[{number}] {why}")
    if args.details and details:
        print()
        print("\n".join(details))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
