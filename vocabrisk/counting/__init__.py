"""Exact token counts: a tokenizer run over documents, counted per id, mergeable.

`counter` counts documents (`pieces` cuts long ones where the tokenizer would anyway), `encoder` runs the
tokenizer on an engine, `engines` chooses that engine (the reference, or an accelerator checked against it on
`probes` and on the corpus), `counts` are the mergeable result, `policy` the special-token rules, `inputs`
counts the inputs of a run, and `executors` decide where that runs.
"""

from vocabrisk.counting.counter import TokenCounter
from vocabrisk.counting.counts import TokenCounts
from vocabrisk.counting.policy import SpecialTokenPolicy

__all__ = ["SpecialTokenPolicy", "TokenCounter", "TokenCounts"]
