; zbtools' tags query for Bash (the grammar package ships none): functions and the commands
; that call them.
(function_definition
  name: (word) @name) @definition.function

(command
  name: (command_name (word) @name)) @reference.call
