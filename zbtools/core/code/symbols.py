"""A file's definitions and references, read from its tree-sitter tags query.

The tags queries mark ``@definition.KIND`` and ``@reference.KIND`` nodes with their ``@name``.
From them this module builds ``Definition`` values: the kind normalised across languages (a
function directly inside a class, interface or ``impl`` is a ``method``), the node widened to
the whole definition where a query marks a part of it (C's ``function_declarator`` becomes its
``function_definition``; a declaration without a body is not a definition), the nesting from
the nodes' ranges, and the scopes a language writes outside the nesting (Go's receiver, Rust's
``impl`` type, C++'s ``Class::method``) for the dotted name (docs/internals/code.md#symbols).

Map: ``Definition``, ``Reference``, ``FileSymbols``; ``parse`` (bytes to a tree); ``read_symbols``
(a language and a file's bytes to its definitions and references).
"""

from __future__ import annotations

from zbtools.core.code.languages import binding, definitions_query, parser, tags_query

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.code.languages import Language

# the kinds a definition may have, as the tools report them
KINDS = ("class", "interface", "module", "function", "method", "constant", "type", "enum",
         "macro", "field", "property")
CONTAINERS = frozenset({"class", "interface", "module", "enum"})
# node types a "method" nests in, beyond definitions: scopes the tags queries do not mark
SCOPE_NODES = frozenset({"impl_item"})
# what a tags query may mark of a definition, and the node that is the whole definition
WIDEN = {"function_declarator": ("function_definition",)}
# C and C++ types that are definitions only with a body (`class A;` declares, `struct S s;` uses)
NEEDS_BODY = frozenset({"class_specifier", "struct_specifier", "union_specifier",
                        "enum_specifier"})
# kinds the node tells better than the query (Rust's and C's enums are not classes or types;
# a Rust `type` alias is not a class): docs/internals/code.md#accuracy
NODE_KINDS = {"enum_item": "enum", "type_item": "type", "enum_specifier": "enum"}
# node types that hold a definition's body
BODY_FIELDS = ("body",)
# what precedes a definition and belongs to it: decorators, attributes
PREFIX_NODES = frozenset({"decorator", "attribute_item", "attribute_list", "annotation",
                          "marker_annotation"})
COMMENT_NODES = frozenset({"comment", "line_comment", "block_comment", "doc_comment"})
# what wraps a definition and moves with it: Python's decorators, JavaScript's ``export``
OUTER_NODES = frozenset({"decorated_definition", "export_statement"})
# a declaration of one variable holding a function is that function's outer part
DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
SIGNATURE_CHARS = 240


class Definition:
    """One definition. Lines are 1-based and inclusive; bytes are offsets into the file.
    ``start_line`` is the line of the definition itself (``def``, ``class``, ``fn``), as
    Python's ``ast`` counts it; ``outer_start_byte`` also takes its decorators, attributes and
    the comment lines directly above it."""

    __slots__ = (
        "body_end_byte",
        "body_start_byte",
        "depth",
        "end_byte",
        "end_line",
        "kind",
        "name",
        "node_type",
        "outer_start_byte",
        "outer_start_line",
        "parent",
        "qualname",
        "signature",
        "start_byte",
        "start_line",
    )

    def __init__(self, kind: str, name: str, node: Any) -> None:
        self.kind = kind
        self.name = name
        self.qualname = name
        self.parent: str | None = None
        self.depth = 0
        self.start_line = node.start_point[0] + 1
        self.end_line = node.end_point[0] + 1
        if node.end_point[1] == 0 and self.end_line > self.start_line:
            self.end_line -= 1  # a node that ends with its line break
        self.start_byte: int = node.start_byte
        self.end_byte: int = node.end_byte
        self.outer_start_byte = self.start_byte
        self.outer_start_line = self.start_line
        body = _body(node)
        self.body_start_byte: int | None = body.start_byte if body is not None else None
        self.body_end_byte: int | None = body.end_byte if body is not None else None
        self.signature = ""
        self.node_type: str = node.type

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "qualname": self.qualname,
                "parent": self.parent, "depth": self.depth, "start_line": self.start_line,
                "end_line": self.end_line, "signature": self.signature}

    def __repr__(self) -> str:
        return f"<{self.kind} {self.qualname} {self.start_line}-{self.end_line}>"


class Reference:
    __slots__ = ("kind", "line", "name")

    def __init__(self, kind: str, name: str, line: int) -> None:
        self.kind = kind
        self.name = name
        self.line = line


class FileSymbols:
    """What one file defines and references, and whether its parse had errors."""

    __slots__ = ("definitions", "has_errors", "references")

    def __init__(self, definitions: list[Definition], references: list[Reference],
                 has_errors: bool) -> None:
        self.definitions = definitions
        self.references = references
        self.has_errors = has_errors


def parse(language: Language, source: bytes) -> Any:
    """The tree-sitter tree of ``source``."""
    return parser(language).parse(source)


def read_symbols(language: Language, source: bytes, tree: Any = None, *,
                 references: bool = True) -> FileSymbols:
    """The definitions (in file order, nested after their parent) and references of ``source``
    (``tree``: its parse, when the caller has it; ``references=False``: the definitions alone,
    faster)."""
    if tree is None:
        tree = parse(language, source)
    query = tags_query(language) if references else definitions_query(language)
    cursor = binding().QueryCursor(query)
    found: dict[tuple[int, int], Definition] = {}
    refs: list[Reference] = []
    for _, captures in cursor.matches(tree.root_node):
        names = captures.get("name")
        if not names:
            continue
        name_node = names[0]
        for capture, nodes in captures.items():
            role, _, kind = capture.partition(".")
            if role == "definition" and kind:
                node = _widened(nodes[0])
                if node is None or (node.start_byte, node.end_byte) in found:
                    continue
                name = _text(source, name_node)
                if not name:
                    continue
                definition = Definition(NODE_KINDS.get(node.type) or _kind(kind), name, node)
                found[(node.start_byte, node.end_byte)] = definition
                _scope_from_name(definition, captures, source)
            elif role == "reference" and kind:
                refs.append(Reference(kind, _text(source, name_node),
                                      name_node.start_point[0] + 1))
    definitions = sorted(found.values(), key=lambda d: (d.start_byte, -d.end_byte))
    _nest(definitions, tree.root_node, source)
    for definition in definitions:
        definition.signature = _signature(source, definition)
        _outer_start(definition, tree.root_node, source)
    return FileSymbols(definitions, refs, bool(tree.root_node.has_error))


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _kind(kind: str) -> str:
    if kind in KINDS:
        return kind
    return {"struct": "class", "trait": "interface", "namespace": "module", "object": "class",
            "union": "class", "variable": "constant"}.get(kind, kind)


def _widened(node: Any) -> Any:
    """The whole definition a query's node belongs to; None for a declaration without a body
    (a C prototype is not a definition)."""
    wanted = WIDEN.get(node.type)
    if wanted is None:
        if node.type in NEEDS_BODY and node.child_by_field_name("body") is None:
            return None
        return node
    parent = node.parent
    while parent is not None and parent.type.endswith("declarator"):
        parent = parent.parent
    if parent is not None and parent.type in wanted:
        return parent
    return None


def _body(node: Any) -> Any:
    for field in BODY_FIELDS:
        body = node.child_by_field_name(field)
        if body is not None:
            return body
    return None


def _scope_from_name(definition: Definition, captures: dict[str, list[Any]],
                     source: bytes) -> None:
    """C++'s ``void Class::method() {}``: the scope the query captured is the parent's name
    (``A<K>::B`` reads ``A.B``; a scope captured with the name itself drops it)."""
    scope = captures.get("local.scope")
    if scope:
        parts = _without_template_arguments(_text(source, scope[0])).split("::")
        if len(parts) > 1 and parts[-1].strip() == definition.name:
            parts.pop()
        definition.parent = ".".join(part.strip() for part in parts)
        definition.qualname = f"{definition.parent}.{definition.name}"
        if definition.kind == "function":
            definition.kind = "method"


def _without_template_arguments(text: str) -> str:
    """``SkipList<Key, Cmp<K>>::Node`` -> ``SkipList::Node``."""
    out: list[str] = []
    depth = 0
    for char in text:
        if char == "<":
            depth += 1
        elif char == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(char)
    return "".join(out)


def _scope_name(node: Any, source: bytes) -> str | None:
    """The type an enclosing non-definition scope names: Rust's ``impl Type`` (and
    ``impl Trait for Type``), Go's method receiver."""
    if node.type == "impl_item":
        target = node.child_by_field_name("type")
        if target is not None:
            return _base_type(target, source)
    return None


def _base_type(node: Any, source: bytes) -> str:
    """``Foo`` of ``Foo<T>``, ``*Foo``, ``&mut Foo``, ``pkg::Foo``."""
    while True:
        for field in ("type", "name"):
            inner = node.child_by_field_name(field)
            if inner is not None and inner is not node and node.type not in (
                    "type_identifier", "identifier"):
                node = inner
                break
        else:
            break
    text = _text(source, node)
    for sep in ("<", "["):
        text = text.split(sep, 1)[0]
    return text.replace("::", ".").lstrip("*&").strip().rsplit(".", 1)[-1] or text


def _nest(definitions: list[Definition], root: Any, source: bytes) -> None:
    """Each definition's parent: the innermost definition whose range holds it, else the scope
    a language writes around it (a Rust ``impl``) or names in it (a Go receiver)."""
    stack: list[Definition] = []
    for definition in definitions:
        while stack and not (stack[-1].start_byte <= definition.start_byte
                             and definition.end_byte <= stack[-1].end_byte):
            stack.pop()
        if definition.parent is not None:  # named by the query (C++)
            if stack:  # `namespace n { void A::m() {} }` is n.A.m
                definition.parent = f"{stack[-1].qualname}.{definition.parent}"
                definition.qualname = f"{definition.parent}.{definition.name}"
                definition.depth = stack[-1].depth + 1
            stack.append(definition)
            continue
        parent = stack[-1] if stack else None
        scope = _outer_scope(definition, root, source, parent)
        if parent is not None:
            definition.parent = parent.qualname
            definition.depth = parent.depth + 1
            definition.qualname = f"{parent.qualname}.{definition.name}"
            if definition.kind == "function" and parent.kind in CONTAINERS:
                definition.kind = "method"
        elif scope is not None:
            definition.parent = scope
            definition.qualname = f"{scope}.{definition.name}"
            if definition.kind == "function":
                definition.kind = "method"
        stack.append(definition)


def _outer_scope(definition: Definition, root: Any, source: bytes,
                 parent: Definition | None) -> str | None:
    if definition.node_type == "method_declaration":  # Go: func (r *Recv) Name()
        node = root.descendant_for_byte_range(definition.start_byte, definition.end_byte)
        receiver = node.child_by_field_name("receiver") if node is not None else None
        if receiver is not None:
            for param in receiver.named_children:
                target = param.child_by_field_name("type")
                if target is not None:
                    return _base_type(target, source)
        return None
    node = root.descendant_for_byte_range(definition.start_byte, definition.end_byte)
    node = node.parent if node is not None else None
    while node is not None:
        if parent is not None and node.start_byte <= parent.start_byte:
            return None  # the definition above is nearer than any scope
        if node.type in SCOPE_NODES:
            return _scope_name(node, source)
        node = node.parent
    return None


def _signature(source: bytes, definition: Definition) -> str:
    end = definition.body_start_byte
    if end is None or end <= definition.start_byte:
        end = source.find(b"\n", definition.start_byte, definition.end_byte)
        if end < 0:
            end = definition.end_byte
    text = source[definition.start_byte:end].decode("utf-8", "replace")
    text = " ".join(text.split())
    return text if len(text) <= SIGNATURE_CHARS else text[:SIGNATURE_CHARS - 1] + "…"


def _outer_start(definition: Definition, root: Any, source: bytes) -> None:
    node = root.descendant_for_byte_range(definition.start_byte, definition.end_byte)
    if node is None:
        return
    while (node.parent is not None and node.parent.start_byte == node.start_byte
           and node.parent.end_byte == node.end_byte):
        node = node.parent
    start = node
    parent = node.parent
    while parent is not None and (parent.type in OUTER_NODES or (
            parent.type in DECLARATIONS and parent.named_child_count == 1)):
        start = parent  # ``export const f = () => 1``: all of it moves with f
        parent = parent.parent
    sibling = _previous(start)
    while sibling is not None and (sibling.type in PREFIX_NODES or sibling.type in COMMENT_NODES):
        # adjacent: nothing but one line break between them
        gap = source[sibling.end_byte:start.start_byte]
        if gap.count(b"\n") > 1 or gap.strip():
            break
        if sibling.type in COMMENT_NODES and source[
                source.rfind(b"\n", 0, sibling.start_byte) + 1:sibling.start_byte].strip():
            break  # a comment that ends a line of code (``class A:  # note``) is not above it
        if sibling.start_byte == 0 and source.startswith(b"#!"):
            break  # the file's #! line
        start = sibling
        sibling = _previous(start)
    definition.outer_start_byte = start.start_byte
    definition.outer_start_line = start.start_point[0] + 1


def _previous(node: Any) -> Any:
    """The node before ``node``; for the first statement of a Python block, what stands
    before the block (the comment lines above a class's first method are the class's
    children, not the block's)."""
    sibling = node.prev_named_sibling
    parent = node.parent
    if sibling is None and parent is not None and parent.type == "block" and \
            parent.start_byte == node.start_byte:
        sibling = parent.prev_named_sibling
    return sibling
