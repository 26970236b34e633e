"""Watch, in your own training run, the head rows a scan predicted would starve.

A scan says which output-head rows the corpus leaves starved (rows whose tokens it rarely or
never contains, pushed by Adam anyway). This checks it where it matters: every `every` steps
it measures how far those rows have moved from where they started, against the rows the
corpus feeds and against the prediction, and warns once when the starved rows have drifted
past `threshold`, suggesting the head-only Adam epsilon (`vocabrisk.verify`).

    profile = vocabrisk.scan(dataset, "HuggingFaceTB/SmolLM2-135M", text_field="text")
    vocabrisk.integrations.watch(trainer, profile, every=50)   # a transformers Trainer
    trainer.train()

or, in a plain PyTorch loop, `monitor = HeadDriftMonitor(model, profile)` and
`monitor.step(step)` after each optimizer step. Measured per sampled row, as relative L2
drift `|w_t - w_0| / |w_0|`:

- `vocabrisk/starved_drift`, `vocabrisk/fed_drift`: mean drift of starved and of fed rows;
- `vocabrisk/starved_to_fed`: their ratio (how much the rows the corpus lacks move, per unit
  of movement of the rows it trains);
- `vocabrisk/prediction_spearman`: rank correlation of the predicted exposure of each row
  with its measured drift.

The head is found by identity (`get_output_embeddings()`): a head tied to the input
embedding is measured as the shared matrix; with peft, an `lm_head` in `modules_to_save`
is measured as its trained copy, and a LoRA-adapted `lm_head` as base weight plus delta.
Rows are compared in float32 whatever the training dtype, against the weights as they were
when the monitor was made (for the callback: when `train()` began, also on a resumed run).
Only the main process (rank 0) measures and logs; a head sharded across processes (DeepSpeed ZeRO-3, FSDP) cannot be
read whole on one rank, and the monitor says so and stays off.

Needs torch (`vocabrisk[verify]`); the Trainer callback needs transformers.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from vocabrisk.advice import head_epsilon
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.exposure import assess
from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.risk.summary import Summary
from vocabrisk.verify.metrics import spearman
from vocabrisk.verify.mitigation import active_adapter, head_module

log = logging.getLogger("vocabrisk")

DEFAULT_EVERY = 50
DEFAULT_THRESHOLD = 0.05  # starved rows moved 5% of their norm
DEFAULT_SAMPLE_ROWS = 4096  # per set: enough for stable means, small next to any head
METRICS = ("starved_drift", "fed_drift", "starved_to_fed", "prediction_spearman")


class HeadDriftWarning(UserWarning):
    """The rows the corpus starves are drifting: the head-only epsilon would hold them."""


@dataclass(frozen=True)
class _Rows:
    """The sampled rows: token ids, which are starved, and their predicted exposure."""

    ids: np.ndarray
    starved: np.ndarray  # bool, per sampled row
    exposure: np.ndarray

    @classmethod
    def of(cls, profile: Profile, plan: TrainingPlan, sample: int, seed: int) -> _Rows:
        risk = assess(profile, plan)
        fed = profile.coverable & ~risk.starved & (profile.counts.counts > 0)
        rng = np.random.default_rng(seed)
        picked = [_sample(np.flatnonzero(mask), sample, rng) for mask in (risk.starved, fed)]
        ids = np.concatenate(picked)
        starved = np.zeros(ids.size, dtype=bool)
        starved[: picked[0].size] = True
        return cls(ids, starved, risk.exposure[ids])


def _sample(ids: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.choice(ids, size, replace=False)) if ids.size > size else ids


def _head_rows(module, index: torch.Tensor) -> torch.Tensor:
    """Rows `index` of the effective head weight, in float32."""
    if hasattr(module, "base_layer") and hasattr(module, "get_delta_weight"):  # a peft LoRA layer
        rows = module.base_layer.weight[index].float()
        for adapter in getattr(module, "active_adapters", [active_adapter(module)]):
            if adapter in getattr(module, "lora_A", {}):
                rows = rows + module.get_delta_weight(adapter)[index].float()
        return rows
    return module.weight[index].float()


def _main_process() -> bool:
    return not (torch.distributed.is_available() and torch.distributed.is_initialized()) or (
        torch.distributed.get_rank() == 0
    )


class HeadDriftMonitor:
    """Measures the drift of a model's head rows that `profile` calls starved and fed.

    `plan` is the training run the prediction is made for (tokens per step, steps, Adam's
    beta2); it decides which rows count as starved, as in a scan's report. At most
    `sample_rows` rows of each set are followed (a fixed random sample), so the cost is a
    small gather every `every` steps, and the snapshot is small next to the head.
    """

    def __init__(
        self,
        model,
        profile: Profile,
        *,
        plan: TrainingPlan | None = None,
        every: int = DEFAULT_EVERY,
        threshold: float = DEFAULT_THRESHOLD,
        sample_rows: int = DEFAULT_SAMPLE_ROWS,
        seed: int = 0,
    ):
        if every < 1:
            raise ValueError(f"every must be at least 1, not {every}")
        self.model = model
        self.every = every
        self.threshold = threshold
        self.plan = (plan or TrainingPlan()).resolve(profile.total_tokens)
        self.history: list[dict] = []  # {"step": ..., **metrics} per measurement
        self.warned = False
        self.enabled = _main_process()
        eps = head_epsilon(Summary.of(profile, self.plan))
        self.head_eps = eps["value"] if eps else None
        self._rows = _Rows.of(profile, self.plan, sample_rows, seed)
        self._module = head_module(model)
        weight = self._module.weight
        if weight.dim() != 2 or weight.shape[0] < profile.counts.counts.size:
            self.enabled = False
            log.warning(
                "vocabrisk: the head on this process has shape %s, not a row per token of the profile's %d;"
                " a head sharded across processes (ZeRO-3, FSDP) cannot be watched: head drift is not logged",
                tuple(weight.shape),
                profile.counts.counts.size,
            )
        input_embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
        self.tied = getattr(input_embeddings, "weight", None) is weight
        if not self.enabled:
            return
        self._index = torch.as_tensor(self._rows.ids, device=weight.device)
        with torch.no_grad():
            self._start = _head_rows(self._module, self._index).detach().clone()
            self._start_norm = self._start.norm(dim=1).clamp_min(torch.finfo(torch.float32).tiny)

    @property
    def starved_rows(self) -> int:
        return int(self._rows.starved.sum())

    @property
    def fed_rows(self) -> int:
        return int((~self._rows.starved).sum())

    @torch.no_grad()
    def measure(self) -> dict[str, float]:
        """The drift of the followed rows now; keys are `vocabrisk/<metric>`."""
        if not self.enabled:
            return {}
        current = _head_rows(self._module, self._index)
        drift = ((current - self._start).norm(dim=1) / self._start_norm).cpu().numpy().astype(np.float64)
        starved, fed = self._rows.starved, ~self._rows.starved
        starved_drift = float(drift[starved].mean()) if starved.any() else float("nan")
        fed_drift = float(drift[fed].mean()) if fed.any() else float("nan")
        ratio = starved_drift / fed_drift if fed_drift > 0 else float("nan")
        values = (starved_drift, fed_drift, ratio, spearman(self._rows.exposure, drift))
        return {f"vocabrisk/{name}": value for name, value in zip(METRICS, values, strict=True)}

    def step(self, step: int) -> dict[str, float] | None:
        """Measure if `step` is one of every `every` steps (and this is the main process)."""
        if not self.enabled or step % self.every:
            return None
        metrics = self.measure()
        self.history.append({"step": step, **metrics})
        self._maybe_warn(step, metrics)
        return metrics

    def _maybe_warn(self, step: int, metrics: dict[str, float]) -> None:
        drift = metrics["vocabrisk/starved_drift"]
        if self.warned or not drift > self.threshold:
            return
        self.warned = True
        fed = metrics["vocabrisk/fed_drift"]
        fix = (
            f"give the head its own Adam epsilon, head_eps={self.head_eps:.1e}: "
            f"vocabrisk.verify.make_head_eps_optimizer(model, lr, head_eps={self.head_eps:.1e}) "
            f"or vocabrisk.verify.hf.HeadEpsTrainer(..., head_eps={self.head_eps:.1e})"
            if self.head_eps is not None
            else "give the head a larger Adam epsilon than the body (vocabrisk.verify.make_head_eps_optimizer)"
        )
        warnings.warn(
            f"vocabrisk: by step {step}, the {self.starved_rows} head rows the scan predicted to starve have"
            f" drifted {drift:.1%} of their norm (threshold {self.threshold:.1%}; the rows the corpus feeds:"
            f" {fed:.1%}). Adam is moving rows of tokens this corpus lacks, which costs what the model knew;"
            f" {fix}{' (the head is tied to the input embedding)' if self.tied else ''}.",
            HeadDriftWarning,
            stacklevel=3,
        )


def _trainer_callback_base():
    try:
        from transformers import TrainerCallback
    except ImportError:  # the plain PyTorch monitor needs no transformers
        return object
    return TrainerCallback


class VocabriskCallback(_trainer_callback_base()):
    """A `transformers` TrainerCallback: head drift into the Trainer's own logs.

    Every `every` steps it asks the Trainer to log (on every process, so that the loss
    gather stays in step) and adds the drift metrics to that log on the main process, where
    `report_to` (TensorBoard, W&B, ...) and `state.log_history` receive them. Reporting
    callbacks run in the order they were added: use `watch(trainer, profile)`, which puts
    this callback ahead of them; one passed in `callbacks=[...]` comes after them and only
    reaches `log_history` and the console.
    """

    def __init__(self, profile: Profile, **monitor_options):
        self.profile = profile
        self.options = monitor_options
        self.every = monitor_options.get("every", DEFAULT_EVERY)
        self.monitor: HeadDriftMonitor | None = None
        self._pending: dict[str, float] | None = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if state.is_world_process_zero and model is not None:
            self.monitor = HeadDriftMonitor(model, self.profile, **self.options)

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step % self.every == 0:
            control.should_log = True
            if self.monitor is not None:
                self._pending = self.monitor.step(state.global_step)
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not self._pending:
            return
        if logs is not None:
            logs.update(self._pending)
        last = state.log_history[-1] if state.log_history else None
        if last is not None and last.get("step") == state.global_step:
            last.update(self._pending)
        self._pending = None


def watch(trainer, profile: Profile, **monitor_options) -> VocabriskCallback:
    """Add a `VocabriskCallback` to `trainer` ahead of its reporting callbacks; returns it.

    Options: `plan`, `every`, `threshold`, `sample_rows`, `seed` (see `HeadDriftMonitor`).
    """
    callback = VocabriskCallback(profile, **monitor_options)
    trainer.callback_handler.callbacks.insert(0, callback)
    return callback
