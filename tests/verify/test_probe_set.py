"""The probe set shipped in the package: eight real texts, each recorded with its source and licence, each cut
into enough documents that `calibrate`'s held-out split and quarter twin work by documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vocabrisk
from vocabrisk import scan
from vocabrisk.corpus import ReadOptions

pytest.importorskip("torch")  # the verify extra, which `calibrate` and its reader need

from vocabrisk.verify.data import HELDOUT_MIN_DOCUMENTS, read_documents

SHIPPED = Path(vocabrisk.__file__).parent / "verify" / "probe_set"
SOURCES = json.loads((SHIPPED / "sources.json").read_text(encoding="utf-8"))
LICENCE_WORDS = {  # what each licence record must say, by the licence sources.json names
    "BSD-3-Clause": "Redistribution and use in source and binary forms",
    "PSF-2.0": "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2",
    "public domain": "public",
    "Apache-2.0": "Apache License",
    "MIT": "Permission is hereby granted, free of charge",
}


def test_every_shipped_probe_is_recorded_and_every_record_is_shipped():
    assert sorted(p.name for p in SHIPPED.glob("*.jsonl.gz")) == sorted(f"{name}.jsonl.gz" for name in SOURCES)
    assert len(SOURCES) == 8


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_probe_names_its_package_and_ships_its_licence(name):
    record = SOURCES[name]
    assert record["package"].split(":")[0] in {"deb", "pypi", "npm"} and record["kind"] and record["files"]
    licence = (SHIPPED / record["licence_record"]).read_text(encoding="utf-8")
    (family,) = [key for key in LICENCE_WORDS if record["licence"].startswith(key)]
    assert LICENCE_WORDS[family] in licence


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_probe_is_many_documents_so_its_quarter_is_a_quarter(name):
    texts = read_documents([str(SHIPPED / f"{name}.jsonl.gz")], ReadOptions())
    assert len(texts) == SOURCES[name]["documents"] >= HELDOUT_MIN_DOCUMENTS
    assert all(text.strip() for text in texts)
    quarter = sum(map(len, texts[: len(texts) // 4])) / sum(map(len, texts))
    assert 0.15 < quarter < 0.35  # calibrate's quarter twin: the first quarter of documents


def test_the_shipped_probes_scan_as_their_documents():
    profile = scan([str(SHIPPED / f"{name}.jsonl.gz") for name in SOURCES], "demo")
    assert profile.documents == sum(record["documents"] for record in SOURCES.values())
    assert not profile.skipped
