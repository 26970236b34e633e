"""Pack the sample corpora `vocabrisk calibrate` trains on by default into the package.

    python scripts/make_probe_set.py

The probe set is four texts of four kinds, the samples v3's probes were (docs/VALIDITY.md): English
prose, Python code, German dialogue and Korean notes, all written for this project
(scripts/make_sample_corpora.py). They ship as gzipped JSON Lines, one record per document, so
that `calibrate` works from an installed package with no repository beside it;
tests/verify/test_probe_set.py checks they hold exactly the sample corpora's documents.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_corpora"
OUT = REPO / "vocabrisk" / "verify" / "probe_set"
PROBES = {
    "english-prose": "english-prose",
    "python-code": "python-code.jsonl",
    "german-dialogue": "german-dialogue.jsonl.gz",
    "korean-notes": "korean-notes.txt",
}


def documents(name: str) -> list[str]:
    """The documents `vocabrisk scan` reads from the sample NAME."""
    from vocabrisk.corpus import Document, ReadOptions, discover, read_source

    texts: dict[tuple[str, str], list[str]] = {}  # a long document's pieces, joined again
    for source in discover([str(SAMPLES / PROBES[name])])[0]:
        for item in read_source(source, ReadOptions()):
            if isinstance(item, Document):
                texts.setdefault((item.source, item.locator), []).append(item.text)
    return ["".join(parts) for parts in texts.values()]


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for name in PROBES:
        lines = "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in documents(name))
        (OUT / f"{name}.jsonl.gz").write_bytes(gzip.compress(lines.encode("utf-8"), mtime=0))
        print(f"{name}: {len(lines.splitlines())} documents -> {OUT / f'{name}.jsonl.gz'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
