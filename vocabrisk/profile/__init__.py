"""The vocabulary-deficiency profile: a corpus's counts and prior against one model, saved, loaded and merged.

`profile` is the profile, `token_table` its per-token columns, `scan` makes one from a corpus, and `inputs`
tells a saved profile from a corpus to count.
"""
