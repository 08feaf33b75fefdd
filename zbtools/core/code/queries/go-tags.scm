; What zbtools adds to tree_sitter_go's queries/tags.scm (docs/internals/code.md#accuracy):
; an interface's methods, as Java's, TypeScript's and C#'s are listed.

(method_elem
  name: (field_identifier) @name) @definition.method
