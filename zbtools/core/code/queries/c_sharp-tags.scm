; zbtools' tags query for C# (the grammar wheel installs its own outside its package).
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(property_declaration name: (identifier) @name) @definition.property
(namespace_declaration name: (_) @name) @definition.module
(file_scoped_namespace_declaration name: (_) @name) @definition.module

(invocation_expression
  function: [
    (identifier) @name
    (member_access_expression name: (identifier) @name)
  ]) @reference.call
(object_creation_expression type: (identifier) @name) @reference.class
(base_list (identifier) @name) @reference.class
