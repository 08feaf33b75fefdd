"""One small file per symbol language, with a definition to find and edit, shared by the
find_symbol and edit_symbol tests: its dotted name, a new definition, a new body, and what the
file is after each; a definition to insert next to it and the dotted name it then has."""

from __future__ import annotations


class Sample:
    def __init__(self, path: str, source: str, symbol: str, kind: str, start_line: int,
                 replacement: str, replaced: str, body: str, body_replaced: str, extra: str,
                 extra_name: str) -> None:
        self.path = path
        self.source = source
        self.symbol = symbol
        self.kind = kind
        self.start_line = start_line
        self.replacement = replacement
        self.replaced = replaced
        self.body = body
        self.body_replaced = body_replaced
        self.extra = extra
        self.extra_name = extra_name

    def __repr__(self) -> str:
        return self.path


SAMPLES = [
    Sample("a.py", "import os\n\n\nclass A:\n    # about m\n    @staticmethod\n    def m():\n"
           "        return 1\n\n    def n(self):\n        pass\n",
           "A.m", "method", 7,
           "@staticmethod\ndef m():\n    return 2\n",
           "import os\n\n\nclass A:\n    @staticmethod\n    def m():\n        return 2\n\n"
           "    def n(self):\n        pass\n",
           "x = 3\nreturn x",
           "import os\n\n\nclass A:\n    # about m\n    @staticmethod\n    def m():\n"
           "        x = 3\n        return x\n\n    def n(self):\n        pass\n",
           "def extra(self):\n    return 4", "A.extra"),
    Sample("a.js", "class K {\n  run() {\n    go();\n  }\n}\n", "K.run", "method", 2,
           "run() {\n  stop();\n}", "class K {\n  run() {\n    stop();\n  }\n}\n",
           "a();\nb();", "class K {\n  run() {\n    a();\n    b();\n  }\n}\n",
           "extra() {\n  return 1;\n}", "K.extra"),
    Sample("a.ts", "export class K {\n  method(a: number): string {\n    return \"\";\n  }\n}\n",
           "K.method", "method", 2,
           "method(a: number): string {\n  return \"x\";\n}",
           "export class K {\n  method(a: number): string {\n    return \"x\";\n  }\n}\n",
           "{\n  return String(a);\n}",
           "export class K {\n  method(a: number): string {\n    return String(a);\n  }\n}\n",
           "extra(): void {}", "K.extra"),
    Sample("a.tsx", "export class V {\n  render() {\n    return <div>hi</div>;\n  }\n}\n",
           "V.render", "method", 2,
           "render() {\n  return <span />;\n}",
           "export class V {\n  render() {\n    return <span />;\n  }\n}\n",
           "return <p />;", "export class V {\n  render() {\n    return <p />;\n  }\n}\n",
           "other() {\n  return <b />;\n}", "V.other"),
    Sample("a.go", "package main\n\ntype T struct{}\n\n// Run runs.\n"
           "func (t *T) Run(x int) error {\n\treturn nil\n}\n", "T.Run", "method", 6,
           "func (t *T) Run(x int) error {\n    if x > 0 {\n        return nil\n    }\n"
           "    return nil\n}",
           "package main\n\ntype T struct{}\n\nfunc (t *T) Run(x int) error {\n\tif x > 0 {\n"
           "\t\treturn nil\n\t}\n\treturn nil\n}\n",
           "_ = x\nreturn nil",
           "package main\n\ntype T struct{}\n\n// Run runs.\nfunc (t *T) Run(x int) error {\n"
           "\t_ = x\n\treturn nil\n}\n",
           "func (t *T) Extra() {}", "T.Extra"),
    Sample("a.rs", "struct S;\n\nimpl S {\n    /// doc\n    #[inline]\n    fn go(&self) -> i32 {\n"
           "        1\n    }\n}\n", "S.go", "method", 6,
           "fn go(&self) -> i32 {\n    2\n}",
           "struct S;\n\nimpl S {\n    fn go(&self) -> i32 {\n        2\n    }\n}\n",
           "let x = 2;\nx",
           "struct S;\n\nimpl S {\n    /// doc\n    #[inline]\n    fn go(&self) -> i32 {\n"
           "        let x = 2;\n        x\n    }\n}\n",
           "fn extra(&self) {}", "S.extra"),
    Sample("A.java", "class A {\n    @Override\n    void m() {\n        x();\n    }\n}\n", "A.m",
           "method", 2, "void m() {\n    y();\n}",
           "class A {\n    void m() {\n        y();\n    }\n}\n",
           "int z = 1;\ny(z);",
           "class A {\n    @Override\n    void m() {\n        int z = 1;\n        y(z);\n"
           "    }\n}\n",
           "void extra() {}", "A.extra"),
    Sample("a.c", "#include <stdio.h>\n\n/* helps */\nint helper(int a) {\n  return a;\n}\n",
           "helper", "function", 4, "int helper(int a) {\n  return a + 1;\n}",
           "#include <stdio.h>\n\nint helper(int a) {\n  return a + 1;\n}\n",
           "int b = a;\nreturn b;",
           "#include <stdio.h>\n\n/* helps */\nint helper(int a) {\n  int b = a;\n"
           "  return b;\n}\n",
           "int extra(void) {\n  return 0;\n}", "extra"),
    Sample("a.cpp", "class C {\n public:\n  int n() {\n    return 1;\n  }\n};\n", "C.n",
           "method", 3,
           "int n() {\n  return 2;\n}",
           "class C {\n public:\n  int n() {\n    return 2;\n  }\n};\n",
           "return 3;", "class C {\n public:\n  int n() {\n    return 3;\n  }\n};\n",
           "int extra() { return 4; }", "C.extra"),
    Sample("a.cs", "class A {\n    /// doc\n    void M() {\n        X();\n    }\n}\n", "A.M",
           "method", 3, "void M() {\n    Y();\n}",
           "class A {\n    void M() {\n        Y();\n    }\n}\n",
           "var z = 1;\nY(z);",
           "class A {\n    /// doc\n    void M() {\n        var z = 1;\n        Y(z);\n    }\n}\n",
           "void Extra() {}", "A.Extra"),
    Sample("a.rb", "class K\n  # doc\n  def m(a)\n    a\n  end\nend\n", "K.m", "method", 3,
           "def m(a)\n  a + 1\nend", "class K\n  def m(a)\n    a + 1\n  end\nend\n",
           "b = a\nb * 2", "class K\n  # doc\n  def m(a)\n    b = a\n    b * 2\n  end\nend\n",
           "def extra\n  1\nend", "K.extra"),
    Sample("a.php", "<?php\nclass A {\n  /** doc */\n  function m() {\n    return 1;\n  }\n}\n",
           "A.m", "method", 4, "function m() {\n  return 2;\n}",
           "<?php\nclass A {\n  function m() {\n    return 2;\n  }\n}\n",
           "$x = 1;\nreturn $x;",
           "<?php\nclass A {\n  /** doc */\n  function m() {\n    $x = 1;\n    return $x;\n"
           "  }\n}\n",
           "function extra() {\n  return 2;\n}", "A.extra"),
    Sample("a.sh", "#!/bin/bash\n# greets\nf() {\n  echo hi\n}\n\nf\n", "f", "function", 3,
           "f() {\n  echo bye\n}", "#!/bin/bash\nf() {\n  echo bye\n}\n\nf\n",
           "echo a\necho b", "#!/bin/bash\n# greets\nf() {\n  echo a\n  echo b\n}\n\nf\n",
           "g() {\n  echo g\n}", "g"),
]

BY_LANGUAGE = {s.path: s for s in SAMPLES}
