"""The probe set shipped in the package is the sample corpora's text, document for document."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vocabrisk
from vocabrisk import scan

SHIPPED = Path(vocabrisk.__file__).parent / "verify" / "probe_set"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"


@pytest.mark.parametrize(
    ("shipped", "sample"),
    [("english-prose", "english-prose"), ("python-code", "python-code.jsonl"),
     ("german-dialogue", "german-dialogue.jsonl.gz"), ("korean-notes", "korean-notes.txt")],
)  # fmt: skip
def test_each_shipped_probe_counts_as_its_sample_corpus(shipped, sample):
    packed, original = scan([str(SHIPPED / f"{shipped}.jsonl.gz")], "demo"), scan([str(SAMPLES / sample)], "demo")
    assert packed.documents == original.documents
    np.testing.assert_array_equal(packed.counts.counts, original.counts.counts)
