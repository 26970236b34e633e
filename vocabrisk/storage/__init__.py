"""The files vocabrisk writes: results written whole, one writer at a time, and the user's cache.

`outputs`: checked before a long run starts, written atomically, with the user's permissions. `locks`: a second
command writing the same output folder is refused. `cache`: facts that cost seconds to compute and never change
for one input.
"""
