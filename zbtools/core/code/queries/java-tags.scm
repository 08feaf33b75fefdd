; What zbtools adds to tree_sitter_java's queries/tags.scm, which lists classes, interfaces
; and methods only (docs/internals/code.md#accuracy): enums, records, annotation types and
; constructors are definitions too, as ctags lists them.

(enum_declaration
  name: (identifier) @name) @definition.enum

(record_declaration
  name: (identifier) @name) @definition.class

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

(constructor_declaration
  name: (identifier) @name) @definition.method
