"""Which special tokens a document contributes to the counts.

Counting must match what training sees. The default follows the model's own tokenizer,
as `tokenizer(text)` does in transformers: its post-processor adds what it adds (Llama's
`<s>`, nothing for GPT-2). Pipelines that pack documents with an end-of-text separator add
one EOS per document with `append_eos`. Special-token strings inside the text (`<unk>` in
wikitext, `<|endoftext|>` in scraped pages) are matched as special tokens, as the tokenizer
does by default; `split_special_tokens` encodes them as plain text instead.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SpecialTokenPolicy:
    add_special_tokens: bool = True
    append_eos: bool = False
    split_special_tokens: bool = False

    def to_dict(self) -> dict:
        return asdict(self)
