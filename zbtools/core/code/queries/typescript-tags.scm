; What zbtools adds to tree_sitter_typescript's queries/tags.scm, itself added to
; JavaScript's (docs/internals/code.md#accuracy): type aliases and enums.

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.enum
