"""The files vocabrisk writes: results written whole, and the user's cache.

`outputs`: checked before a long run starts, written atomically, with the user's permissions. `cache`: facts
that cost seconds to compute and never change for one input.
"""
