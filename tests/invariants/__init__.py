"""The product's promises as invariants, each checked on generated inputs against an oracle.

One module per invariant of docs/contract.md#the-promises-as-invariants; ``budget`` sets how long
each searches.
"""
