; What zbtools adds to tree_sitter_cpp's queries/tags.scm (docs/internals/code.md#accuracy):
; namespaces; destructors; methods defined outside a class template or a nested class
; (`T<K>::m`, `A::B::m`: the scope is the whole name, the method's own name dropped from it);
; a class or struct defined under a qualified name (`struct A<K>::Node { ... }`).

(namespace_definition
  name: (namespace_identifier) @name) @definition.module

(function_declarator
  declarator: (destructor_name) @name) @definition.function

(function_declarator
  declarator: (qualified_identifier
    scope: (namespace_identifier) @local.scope
    name: (destructor_name) @name)) @definition.method

(function_declarator
  declarator: (qualified_identifier
    scope: (template_type) @local.scope
    name: [(identifier) (destructor_name) (operator_name)] @name)) @definition.method

(function_declarator
  declarator: (qualified_identifier
    name: (qualified_identifier
      name: [(identifier) (destructor_name) (operator_name)] @name)) @local.scope) @definition.method

(struct_specifier
  name: (qualified_identifier
    scope: (_) @local.scope
    name: (type_identifier) @name)
  body: (_)) @definition.class

(class_specifier
  name: (qualified_identifier
    scope: (_) @local.scope
    name: (type_identifier) @name)
  body: (_)) @definition.class
