"""`calibrate`: a few short probe fine-tunes on generic text, and the forecast's constants fitted to them.

Each probe corpus is trained on whole and as its first quarter (the same text, four times
the epochs), from the same base, with one short plan. Each run is measured from the final
hidden states and output matrices of the base and trained models, so the head's share of
forgetting is right for tied heads too: the base body reading the trained output matrix. Its
total is also measured at the forecast's first checkpoint (`forecast.EARLY_STEP`), where the
model's adaptation to plain text shows before the body has forgotten much (forecast term 7).
The forecast of every probe is recomputed for a grid of `kappa` (`vocabrisk.risk.calibration.fit`);
the fitted calibration is saved where later scans of the same model find it.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from vocabrisk.corpus import ReadOptions
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.errors import InputError
from vocabrisk.model.loaded import LoadedModel, load_model
from vocabrisk.profile.scan import scan
from vocabrisk.risk.calibration import Calibration, EarlyPoint, ProbeRun, fit, leave_one_out, save_calibration
from vocabrisk.risk.forecast import EARLY_STEP, Drive
from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.risk.summary import Summary
from vocabrisk.verify.data import load_streams, read_documents, windows
from vocabrisk.verify.measure import final_hidden, matrix_loss, output_matrix
from vocabrisk.verify.old_loss import loss_on
from vocabrisk.verify.run import load_causal_lm
from vocabrisk.verify.train import TrainConfig, finetune

QUARTER = 4  # the short twin of each probe: its first quarter, repeated four times as often


@dataclass(frozen=True)
class CalibrationResult:
    calibration: Calibration
    path: Path | None
    runs: list[dict]


PROBE_SET = tuple(sorted(str(p) for p in (Path(__file__).parent / "probe_set").glob("*.jsonl.gz")))
"""The probes `calibrate` trains on unless given others: eight real texts of eight kinds, none written for this
project (English documentation, Python and JavaScript code, an English word list, a plain-text table, German,
Japanese and Russian technical prose; `probe_set/sources.json` and `probe_set/licenses/` say where each comes from
and under which licence; scripts/make_probe_set.py)."""


def calibrate(
    probes: Sequence[str] | None = None,
    model: str | LoadedModel = "demo",
    config: TrainConfig | None = None,
    *,
    reference: Sequence[str] | None = None,
    eval_windows: int = 32,
    save: bool = True,
    log: Callable[[str], None] = lambda _m: None,
) -> CalibrationResult:
    """Run the probes (the shipped `PROBE_SET` by default), fit the constants, save them for MODEL (see the
    module docstring)."""
    config = config or TrainConfig(TrainingPlan(tokens_per_step=1024, steps=60, learning_rate=1e-3, warmup_steps=6))
    probes = list(probes) if probes else list(PROBE_SET)
    loaded = model if isinstance(model, LoadedModel) else load_model(model)
    policy = SpecialTokenPolicy()
    reference = list(reference or [])
    if not reference and loaded.bundled_reference is None:
        raise InputError(
            f"{loaded.files.name}: calibrate needs old text to measure forgetting on",
            hint="pass --reference with text in the base model's own distribution",
        )
    reference = reference or [str(loaded.bundled_reference)]
    base = load_causal_lm(loaded, config.device)
    plan = config.plan
    runs, measured, old_loss = [], [], None
    with tempfile.TemporaryDirectory(prefix="vocabrisk-calibrate-") as tmp:
        for path in probes:
            streams = load_streams(loaded, [path], reference, ReadOptions(), policy, 0.1, config.seq_len + 1)
            if old_loss is None:  # the base model's loss on the old text weighs the body's pathways (term 6)
                old_loss = loss_on(base, streams.reference, config.device, config.bf16)
            old = windows(streams.reference, config.seq_len, eval_windows)
            base_matrix = output_matrix(base)
            base_hidden = final_hidden(base, old, config.device, config.bf16)
            base_loss = matrix_loss(base_hidden, base_matrix, old, config.device)
            unmeasured = Calibration(old_loss=old_loss)
            texts = read_documents([path], ReadOptions())

            def forgetting(model, old=old, base_loss=base_loss) -> float:
                hidden = final_hidden(model, old, config.device, config.bf16)
                return matrix_loss(hidden, output_matrix(model), old, config.device) - base_loss

            for part, share in (("whole", 1), ("quarter", QUARTER)):
                train = streams.train[: len(streams.train) // share]
                if len(train) <= config.seq_len:
                    continue
                tuned = copy.deepcopy(base)
                torch.manual_seed(config.seed)
                early_total = []

                def early(step, tuned=tuned, early_total=early_total, forgetting=forgetting):
                    if step == EARLY_STEP:
                        early_total.append(forgetting(tuned))

                finetune(tuned, train, config, after_step=early if config.steps > EARLY_STEP else None)
                matrix = output_matrix(tuned)
                total = forgetting(tuned)
                head = matrix_loss(base_hidden, matrix, old, config.device) - base_loss
                kept = texts[: max(1, len(texts) // share)]
                corpus = Path(tmp) / f"probe-{len(runs)}.jsonl"
                corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in kept), encoding="utf-8")
                profile = scan([str(corpus)], loaded, reference=reference, policy=policy)
                summary = Summary.of(profile, plan, unmeasured)
                risk = summary.risk
                name = f"{Path(path).name} ({part})"

                drive = Drive.of(profile.shares, risk.exposure, risk.prior, plan, profile.total_tokens)
                fed = profile.shares > 0

                def curve(kappas, drive=drive, fed=fed, profile=profile, risk=risk):
                    return drive.head(kappas, fed, profile.old_text, risk.prior)

                def early_curve(kappas, drive=drive, fed=fed, profile=profile, risk=risk):
                    return drive.early_head(kappas, fed, profile.old_text, risk.prior)

                epochs = plan.implied_epochs(len(train))
                terms = summary.forecast.terms
                at_early = EarlyPoint(early_total[0], terms.curve[0], early_curve) if early_total else None
                measured.append(ProbeRun(name, head, total, terms.unit, curve, source=Path(path).name, early=at_early))
                runs.append({"probe": name, "tokens": len(train), "epochs": epochs, "head": head, "total": total}
                            | ({"early_total": early_total[0]} if early_total else {}))  # fmt: skip
                early_part = f", at step {EARLY_STEP} {early_total[0]:+.3f}" if early_total else ""
                log(f"{name}: {len(train):,} tokens, {epochs:.1f} epochs: forgetting {total:+.3f} (head {head:+.3f}"
                    f"{early_part})")  # fmt: skip
                del tuned
    if len(measured) < 2:
        raise InputError("the probes were too small to train on", hint="give larger probe corpora")
    fitted = replace(
        fit(measured, old_loss=old_loss),
        fingerprint=loaded.calibration_key,
        weights=loaded.weights_key,
        left_out=leave_one_out(measured, old_loss=old_loss),
    )
    return CalibrationResult(fitted, save_calibration(fitted) if save else None, runs)
