"""Priors: how much the base model relies on each token, from a reference, the head, or the tokenizer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from safetensors.numpy import save_file

import vocabrisk.prior.choose
from vocabrisk import Summary, TrainingPlan, rank, scan
from vocabrisk.cli.commands import main
from vocabrisk.model import load_vocabulary, locate_head, resolve_model
from vocabrisk.model.facts import load_facts
from vocabrisk.model.loaded import load_model
from vocabrisk.model.priors import head_prior, tokenizer_prior
from vocabrisk.risk.exposure import assess

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"


def spearman(a, b) -> float:
    ranks = [np.argsort(np.argsort(x)) for x in (a, b)]
    return float(np.corrcoef(*ranks)[0, 1])


def tiny_model(tmp_path: Path, shared_data: Path, tensors: dict, config: dict | None = None) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(shared_data / "tokenizers" / "gpt2" / "tokenizer.json", folder / "tokenizer.json")
    (folder / "config.json").write_text(json.dumps(config or {"model_type": "gpt2"}))
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def test_final_norm_bias_gives_the_models_context_free_logits(tmp_path, shared_data):
    rng = np.random.default_rng(0)
    head = rng.normal(size=(50257, 8)).astype(np.float32)
    bias = rng.normal(size=8).astype(np.float32)
    tensors = {"lm_head.weight": head, "transformer.ln_f.weight": np.ones(8, np.float32), "transformer.ln_f.bias": bias}
    info, _ = locate_head(resolve_model(str(tiny_model(tmp_path, shared_data, tensors))))
    prior, how = head_prior(info, 50257)
    logits = head.astype(np.float64) @ bias
    expected = np.exp(logits - logits.max())
    np.testing.assert_allclose(prior, expected / expected.sum(), rtol=1e-4)
    assert "final-norm bias" in how


def test_without_a_bias_rows_pointing_away_from_the_mean_row_count_as_common(tmp_path, shared_data):
    """Absent tokens' rows all drift along minus the typical hidden state; common rows point the other way."""
    rng = np.random.default_rng(1)
    typical = rng.normal(size=16)
    head = rng.normal(scale=0.1, size=(32000, 16)) - typical  # mostly rare rows
    head[:100] += 2 * typical  # a few common rows
    tensors = {"model.embed_tokens.weight": head.astype(np.float32), "model.norm.weight": np.ones(16, np.float32)}
    folder = tiny_model(tmp_path, shared_data, tensors, {"model_type": "llama"})
    shutil.copy(shared_data / "tokenizers" / "llama2" / "tokenizer.json", folder / "tokenizer.json")
    info, _ = locate_head(resolve_model(str(folder)))
    prior, how = head_prior(info, 32000)
    assert "mean row" in how
    assert prior[:100].min() > prior[100:].max()


def test_padded_heads_are_cut_to_the_vocabulary_and_reported(tmp_path, shared_data):
    tensors = {"lm_head.weight": np.ones((50304, 4), np.float32), "transformer.ln_f.bias": np.zeros(4, np.float32)}
    tensors["transformer.ln_f.weight"] = np.ones(4, np.float32)
    model = load_model(str(tiny_model(tmp_path, shared_data, tensors)))
    profile = scan([str(SAMPLES / "korean-notes.txt")], model)
    assert profile.prior.size == profile.vocab_size == 50257
    assert profile.model["head_rows_without_token"] == 50304 - 50257
    assert profile.model["tokens_without_head_row"] == 0


def test_without_weights_the_tokenizer_gives_the_prior(shared_data):
    profile = scan([str(SAMPLES / "korean-notes.txt")], str(shared_data / "tokenizers" / "pegasus"))
    assert profile.prior_source == "tokenizer"
    assert np.isclose(profile.prior.sum(), 1.0)


@pytest.mark.parametrize("name", ["gpt2", "llama2", "bert-base-uncased", "pegasus"])
def test_tokenizer_prior_favours_common_english_over_rare_pieces(shared_data, name):
    path = shared_data / "tokenizers" / name / "tokenizer.json"
    vocab, facts = load_vocabulary(path), load_facts(path)
    prior = tokenizer_prior(vocab)
    common = [i for i in (facts.id_of(p) for p in ("the", "Ġthe", "▁the")) if i is not None]
    assert common and prior[common[0]] > np.median(prior[prior > 0]) * 10
    assert all(prior[i] == 0 for i in vocab.special_ids)


def test_data_free_demo_prior_ranks_corpora_like_its_reference(shared_data):
    """The head-only prior must order candidates as the reference corpus does (the point of a prior)."""
    model = load_model("demo")
    candidates = sorted(str(p) for p in SAMPLES.iterdir()) + sorted(
        str(p) for p in (shared_data / "corpora").glob("*/*.txt")
    )
    plan = TrainingPlan(tokens_per_step=8192, steps=300)
    with_reference = [assess(scan([c], model), plan).score for c in candidates]
    data_free = [assess(scan([c], model, reference=None), plan).score for c in candidates]
    assert spearman(with_reference, data_free) > 0.85


def ten_candidates(tmp_path: Path) -> list[str]:
    """Ten small corpora, each a tenth of a real one (the sample Korean notes)."""
    lines = (SAMPLES / "korean-notes.txt").read_text(encoding="utf-8").splitlines()[:400]
    paths = []
    for number in range(10):
        path = tmp_path / f"candidate-{number}.txt"
        path.write_text("\n".join(lines[number::10]) + "\n", encoding="utf-8")
        paths.append(str(path))
    return paths


def calls_to(monkeypatch, name: str) -> list:
    """The arguments of every call `vocabrisk.prior.choose` makes to its function `name`, which still runs."""
    calls, real = [], getattr(vocabrisk.prior.choose, name)

    def recorded(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(vocabrisk.prior.choose, name, recorded)
    return calls


def test_rank_reads_the_reference_once_for_all_its_candidates(tmp_path, monkeypatch):
    counted, old_text_reads = calls_to(monkeypatch, "count_inputs"), calls_to(monkeypatch, "read_old_text")
    ranked = rank(ten_candidates(tmp_path), "demo")
    assert len(ranked) == 10
    assert [args[0] for args in counted] == [[str(load_model("demo").bundled_reference)]]
    assert len(old_text_reads) == 1
    (source,) = {r.summary.profile.prior_source for r in ranked}
    assert source.startswith("reference: reference.txt.gz (")


def test_the_rank_command_reads_the_head_once_for_all_its_candidates(tmp_path, monkeypatch):
    head_reads = calls_to(monkeypatch, "head_prior")
    result = CliRunner().invoke(main, ["rank", *ten_candidates(tmp_path), "--prior", "head", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["candidates"]) == 10
    assert len(head_reads) == 1


def test_a_reference_gives_the_same_prior_and_forecast_from_the_cli_as_from_the_api(tmp_path):
    """The CLI's --reference is read as the API reads it: same prior, same old text, same forecast (given the base
    loss the CLI used: it measures it by default where torch is installed, and the API takes it as `old_loss`)."""
    corpus, reference = SAMPLES / "german-dialogue.jsonl.gz", SAMPLES / "python-code.jsonl"
    result = CliRunner().invoke(
        main, ["scan", str(corpus), "--reference", str(reference), "--text-field", "text", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    profile = scan([str(corpus)], "demo", reference=[str(reference)], text_field="text")
    summary = Summary.of(profile, old_loss=shown["forecast"]["constants"]["old_loss"])
    assert profile.old_text is not None and profile.prior_source.startswith("reference: python-code.jsonl")
    assert shown["risk"]["score"] == summary.risk.score
    assert shown["forecast"]["total_nats"] == summary.forecast.total
