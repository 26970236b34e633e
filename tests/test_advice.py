"""Advice that fits the model: encoders, tokenizer-only folders, byte fallback, placeholders, covered groups."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from vocabrisk import Summary, advise, scan
from vocabrisk.cli.commands import main
from vocabrisk.model import load_vocabulary
from vocabrisk.model.groups import BYTES
from vocabrisk.model.priors import tokenizer_prior


@pytest.fixture
def tokenizer_only(tmp_path, shared_data):
    def make(name: str, config: str | None = None):
        folder = tmp_path / name
        shutil.copytree(shared_data / "tokenizers" / name, folder)
        if config:
            (folder / "config.json").write_text(config)
        return str(folder)

    return make


@pytest.fixture
def shakespeare(shared_data) -> str:
    return str(shared_data / "corpora" / "en-shakespeare" / "input.txt")


def test_an_encoder_gets_no_head_risk_and_no_head_advice(tokenizer_only, shakespeare):
    bert = tokenizer_only("bert-base-uncased", '{"model_type": "bert", "architectures": ["BertForMaskedLM"]}')
    summary = Summary.of(scan([shakespeare], bert))
    data, advice = summary.to_dict(), advise(summary)
    assert data["risk"]["applies"] is False and "encoder" in data["risk"]["trust"]
    assert "freeze" not in advice.train_head["recommendation"] and advice.head_eps is None
    result = CliRunner().invoke(main, ["scan", shakespeare, "--model", bert, "-q"])
    assert "not applicable" in result.stdout and "HIGH" not in result.stdout
    assert "freeze the output head" not in result.stdout


def test_bracketed_placeholders_are_not_vocabulary_to_cover(tokenizer_only, shakespeare):
    bert = tokenizer_only("bert-base-uncased", '{"model_type": "bert"}')
    summary = Summary.of(scan([shakespeare], bert))
    tokens = summary.profile.tokens
    pron = tokens.index("[PRON]")
    assert summary.profile.groups[pron] == "unused ids" and not summary.profile.coverable[pron]
    assert summary.profile.groups[tokens.index("[CLS]")] == "special tokens"
    shown = {t.token for t in summary.top_at_risk} | {e for r in advise(summary).add_data for e in r["examples"]}
    assert not any(token.startswith("[") and token.endswith("]") for token in shown)


def test_a_tokenizer_only_scan_names_its_prior_and_how_far_to_trust_it(tokenizer_only, shakespeare):
    gpt2 = tokenizer_only("gpt2")
    result = CliRunner().invoke(main, ["scan", shakespeare, "--model", gpt2, "--prior", "tokenizer", "-q"])
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "counts only" not in text and "prior: tokenizer" in text and "a rough estimate" in text
    assert "--reference TEXT" in text and "bands low < 0.05" in text


def test_byte_fallback_pieces_neither_dominate_the_prior_nor_become_data_to_add(shared_data, shakespeare, tmp_path):
    vocab = load_vocabulary(shared_data / "tokenizers" / "llama2" / "tokenizer.json")
    prior = tokenizer_prior(vocab)
    byte_pieces = vocab.byte_fallback_mask
    assert prior[byte_pieces].sum() < 0.01  # was 38.9%
    folder = tmp_path / "llama2"
    shutil.copytree(shared_data / "tokenizers" / "llama2", folder)
    advice = advise(Summary.of(scan([shakespeare], str(folder))))
    assert BYTES not in {row["group"] for row in advice.add_data}
    assert not any(e.startswith("<0x") for row in advice.add_data for e in row["examples"])


def test_a_corpus_made_of_a_group_is_not_told_to_add_it(tokenizer_only, shakespeare):
    advice = advise(Summary.of(scan([shakespeare], tokenizer_only("gpt2"))))
    latin = next(row for row in advice.add_data if row["group"] == "Latin")
    assert latin["covered"] and latin["corpus_share"] > 0.5


def test_a_flat_mixing_curve_says_what_it_mixes_and_why(tmp_path):
    corpus = tmp_path / "notes.txt"
    corpus.write_text("the cat sat on the mat. " * 200, encoding="utf-8")
    summary = Summary.of(scan([str(corpus)], "demo"))
    replay = scan([str(corpus)], "demo")  # mixing a corpus with itself changes nothing
    advice = advise(summary, replay)
    assert len({round(m["risk"], 9) for m in advice.mixing}) == 1
    assert f"mixing in replay: {corpus}" in advice.mixing_note
    assert "risk is flat from 0.1% on" in advice.mixing_note and "100% of what is left" in advice.mixing_note
    assert "forecast still falls" not in advice.mixing_note  # itself as replay: no other kind to protect with
    sloped = advise(summary)  # the demo model's reference text does feed the starved rows
    assert sloped.mixing[0]["risk"] > sloped.mixing[-1]["risk"] and "flat from 0.1%" not in sloped.mixing_note


def test_ties_at_the_top_are_broken_by_corpus_count_and_counted(tokenizer_only, shakespeare):
    gpt2 = tokenizer_only("gpt2")
    summary = Summary.of(scan([shakespeare], gpt2))
    top = summary.top_at_risk
    contributions = [summary.risk.contribution[t.token_id] for t in top]
    assert contributions == sorted(contributions, reverse=True)
    tied = [t for t, c in zip(top, contributions, strict=True) if np.isclose(c, contributions[0])]
    assert [t.count for t in tied] == sorted(t.count for t in tied)
    assert summary.top_at_risk_ties > 0
    printed = CliRunner().invoke(main, ["scan", shakespeare, "--model", gpt2, "-q"]).stdout
    assert "more tokens tie with the last row" in " ".join(printed.split())
