"""`verify`: fine-tune a copy of the model briefly and hold the scan's predictions against what happened.

One plain AdamW run (and, with `compare_eps`, one with the head-only epsilon, from the same
base, data order and settings) is measured for per-row head drift, forgetting on old text,
learning on held-out new text, and the head swaps and row edits that say where forgetting
lives. The scan's per-row exposure (which rows it expects to starve) is then compared with the
measured drift by rank; the prior-weighted contribution is reported beside it, as it ranks
rows by what their drift costs rather than by how far they walk.
"""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from vocabrisk.advice import head_epsilon
from vocabrisk.corpus import ReadOptions
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.errors import InputError, ModelError
from vocabrisk.model.loaded import LoadedModel, load_model
from vocabrisk.prior.self_samples import self_generated
from vocabrisk.profile.scan import scan
from vocabrisk.risk.exposure import never_seen_share, unigram_kl
from vocabrisk.risk.summary import Summary
from vocabrisk.verify.data import load_streams, windows, write_text
from vocabrisk.verify.epsilon import measured_head_eps
from vocabrisk.verify.measure import Evaluator, effects, head_inputs, head_matrix, measure_run
from vocabrisk.verify.metrics import auroc, precision_at_k, spearman, top_share
from vocabrisk.verify.mitigation import find_head
from vocabrisk.verify.train import TrainConfig, finetune


@dataclass(frozen=True)
class VerifyConfig:
    train: TrainConfig = field(default_factory=TrainConfig)
    compare_eps: bool = False
    head_eps: float | None = None  # None: derived from the plain run's measured gradient scales
    heldout_share: float = 0.1
    eval_windows: int = 64  # windows of old text and of held-out text to evaluate on
    top_share: float = 0.1  # "drifted most": this share of rows with the largest measured drift


@dataclass
class VerifyResult:
    report: dict  # JSON-ready: config, prediction, measurements, agreement
    rows: dict  # per-row arrays over coverable rows: predicted exposure, drift, fed/starved masks
    losses: dict  # training loss curves by run name


def verify(
    inputs: Sequence[str],
    model: str | LoadedModel = "demo",
    config: VerifyConfig | None = None,
    *,
    reference: Sequence[str] | None = None,
    read_options: ReadOptions | None = None,
    policy: SpecialTokenPolicy | None = None,
    strict: bool = False,
    log: Callable[[str], None] | None = None,
) -> VerifyResult:
    """Run the check on the corpus `inputs` (see the module docstring).

    `reference` is old text in the base model's distribution: forgetting is measured on it
    and the scan's prior comes from it. Without it, the model's bundled sample is used, or
    else samples the base model generates before training.
    """
    config = config or VerifyConfig()
    tc = config.train
    log = log or (lambda _message: None)
    read_options, policy = read_options or ReadOptions(), policy or SpecialTokenPolicy()
    loaded = model if isinstance(model, LoadedModel) else load_model(model)
    _check_device(tc)
    torch.manual_seed(tc.seed)
    streams = load_streams(
        loaded, inputs, reference, read_options, policy, config.heldout_share, min_tokens=tc.seq_len + 1
    )
    base = load_causal_lm(loaded, tc.device)
    with tempfile.TemporaryDirectory() as tmp:
        if streams.reference is None:
            log("no old text: sampling the base model's own distribution")
            old, scan_reference, old_source = _generated_reference(base, loaded, config, Path(tmp))
        else:
            old = windows(streams.reference, tc.seq_len, config.eval_windows)
            scan_reference, old_source = streams.reference_paths, ", ".join(streams.reference_paths)
        log("scanning the corpus")
        profile = scan(
            list(inputs), loaded, read_options=read_options, policy=policy, strict=strict, reference=scan_reference
        )
    plan = tc.plan
    summary = Summary.of(profile, plan)
    risk = summary.risk

    evaluator = Evaluator(old, windows(streams.heldout, tc.seq_len, config.eval_windows), tc.device, tc.bf16)
    base_losses = evaluator.losses(base)
    base_head = head_matrix(base)
    hidden = head_inputs(base, old, tc.device)
    edits = {"starved_rows": risk.starved, "top_drifted_rows": None}

    runs, losses = {}, {}
    log(f"training {tc.steps} steps of {tc.batch_size}×{tc.seq_len} tokens (plain AdamW)")
    plain_model = copy.deepcopy(base)
    plain = finetune(plain_model, streams.train, tc)
    measured = measure_run(plain_model, base, base_head, evaluator, hidden, edits)
    del plain_model
    runs["plain"] = _run_report(plain, measured, base_losses)
    losses["plain"] = plain.losses
    fed = profile.coverable & (profile.counts.counts > 0) & ~risk.starved
    recommended = measured_head_eps(plain.head_grad_rms, profile.counts.counts, fed, risk.starved)

    if config.compare_eps:
        head_eps = config.head_eps or (recommended or {}).get("value")
        if head_eps is None:
            raise InputError("no starved or no fed rows: the head-eps comparison has nothing to separate")
        log(f"training again with head eps {head_eps:g}")
        eps_model = copy.deepcopy(base)
        fixed = finetune(eps_model, streams.train, tc, head_eps=head_eps)
        runs["head_eps"] = _run_report(
            fixed, measure_run(eps_model, base, base_head, evaluator, hidden, edits), base_losses
        )
        losses["head_eps"] = fixed.losses
        runs["head_eps"]["vs_plain"] = _fix_effect(runs["plain"], runs["head_eps"])

    coverable = profile.coverable
    _, head = find_head(base)
    report = {
        "model": loaded.files.name,
        "corpus": list(inputs),
        "head": {"rows": int(head.shape[0]), "hidden": int(head.shape[1]), "tied": _is_tied(base)},
        "config": {**tc.to_dict(), "heldout_share": config.heldout_share, "eval_windows": config.eval_windows},
        "data": {
            "train_tokens": len(streams.train),
            "heldout_tokens": len(streams.heldout),
            "old_text": old_source,
            "old_windows": len(old),
        },
        "prediction": {
            "risk": risk.score,
            "band": risk.band,
            "starved_rows": int(risk.starved.sum()),
            "prior": risk.prior_source,
            "plan": plan.to_dict(),
            "baselines": {"never_seen_share": never_seen_share(profile), "unigram_kl": unigram_kl(profile)},
            "head_eps_from_counts": (head_epsilon(summary) or {}).get("value"),
        },
        "base": base_losses,
        "runs": runs,
        "agreement": agreement(risk.exposure[coverable], measured.drift[coverable], config.top_share),
        "agreement_weighted": agreement(risk.contribution[coverable], measured.drift[coverable], config.top_share),
        "agreement_never_seen": agreement(
            (profile.counts.counts == 0)[coverable].astype(float), measured.drift[coverable], config.top_share
        ),
        "recommended_head_eps": recommended,
    }
    rows = {
        "predicted": risk.exposure[coverable],
        "drift": measured.drift[coverable],
        "logit_drift": measured.logit_drift[coverable],
        "starved": risk.starved[coverable],
        "never_seen": (profile.counts.counts == 0)[coverable],
    }
    return VerifyResult(report=report, rows=rows, losses=losses)


def agreement(predicted: np.ndarray, drift: np.ndarray, share: float) -> dict:
    """Predicted per-row risk against measured drift: Spearman, AUROC and precision for the top rows."""
    top = top_share(drift, share)
    k = int(top.sum())
    return {
        "rows": int(drift.size),
        "spearman": spearman(predicted, drift),
        "auroc_top": auroc(predicted, top),
        "precision_at_k": precision_at_k(predicted, top, k),
        "k": k,
        "top_share": share,
    }


def load_causal_lm(loaded: LoadedModel, device: str):
    """The full model in float32 (training keeps float32 master weights; bf16 is autocast on GPU).

    Loaded as float32, not cast after: transformers marks a de-quantized GGUF model quantized and refuses
    `.float()` on it. Its GGUF reader draws a progress bar that ignores transformers' setting, so stderr is
    held while it loads (an error still arrives as the exception).
    """
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    try:
        folder, options = loaded.files.pretrained()
        with open(os.devnull, "w") as quiet, contextlib.redirect_stderr(quiet):
            model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **options)
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"{loaded.files.name}: cannot load it as a causal LM ({exc})",
            hint="verify needs config.json and weights that transformers' AutoModelForCausalLM can load",
        ) from exc
    return model.to(device)


def _check_device(tc: TrainConfig) -> None:
    if tc.device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError("--device cuda: no CUDA device is available", hint="use --device cpu")
    if tc.bf16 and not tc.device.startswith("cuda"):
        raise InputError("--bf16 is for GPUs", hint="add --device cuda, or drop --bf16 on CPU")


def _generated_reference(base, loaded: LoadedModel, config: VerifyConfig, folder: Path):
    """Old text sampled from the base model, and a file of it for the scan's prior."""
    from tokenizers import Tokenizer

    tc = config.train
    samples = self_generated(base, loaded.start_id, config.eval_windows, tc.seq_len, tc.seed, tc.device)
    texts = Tokenizer.from_file(str(loaded.files.tokenizer_json)).decode_batch(samples.tolist())
    path = write_text(folder / "self-generated.txt", texts)
    return samples, [str(path)], f"self-generated: {len(samples)} samples of {tc.seq_len} tokens"


def _is_tied(model) -> bool:
    embedding = model.get_input_embeddings()
    return embedding is not None and embedding.weight is find_head(model)[1]


def _run_report(result, measured, base_losses: dict) -> dict:
    drift = measured.drift
    return {
        "head_eps": result.head_eps,
        "train_seconds": result.seconds,
        "first_train_loss": result.losses[0],
        "final_train_loss": float(np.mean(result.losses[-10:])),
        "losses": measured.trained,
        **effects(measured, base_losses),
        "drift": {"median": float(np.median(drift)), "max": float(drift.max())},
    }


def _fix_effect(plain: dict, fixed: dict) -> dict:
    """Share of forgetting the head eps removed and share of learning it kept."""
    removed = 1 - fixed["forgetting"] / plain["forgetting"] if plain["forgetting"] > 0 else None
    kept = fixed["learning"] / plain["learning"] if plain["learning"] > 0 else None
    return {"forgetting_removed": removed, "learning_kept": kept}
