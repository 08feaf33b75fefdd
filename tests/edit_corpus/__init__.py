"""The evaluation corpus of zbtools' edit matching (docs/internals/matching.md#corpus).

* ``sources`` - the files edited: hand-written fixtures, byte-exact generated fixtures (CRLF,
  mixed EOL, BOM, latin-1, no final newline, ...), and hash-pinned Python stdlib files.
* ``generate`` - deterministic, seeded cases per perturbation family P0-P26 plus the
  peer-regression cases, each with its expected bytes and truth span.
* ``oracle`` - an independent brute-force labeller (its own normalisers, strict and loose
  readings of every tier) that decides must_apply / must_refuse / either / noop.
* ``harness`` - runs cases through a tool's JSON contract and computes the section 8.5 metrics.

``tests/core/editing/test_edit_corpus.py`` runs the ~300-case CI subset with the hard gates;
``benchmarks/edit_corpus.py`` runs the ~5k-case corpus and prints the full report.
Nothing here imports zbtools' matcher: the tool is only ever called through ``zbtools.entry``.
"""
