"""The short fine-tuning run: AdamW on random windows of the new corpus, nothing else.

Both runs of a comparison build their optimizer through `head_eps_param_groups`, so the
plain run and the head-eps run differ in the head's eps alone. Each step also accumulates
the squared gradient of every head row (after clipping, as Adam sees it): the measured
gradient scales the recommended epsilon is derived from.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.verify.data import sample_batch
from vocabrisk.verify.mitigation import DEFAULT_EPS, find_head, head_eps_param_groups

VERIFY_PLAN = TrainingPlan(tokens_per_step=2048, steps=150, learning_rate=1e-3, warmup_steps=15, eps=DEFAULT_EPS)
"""A short check: the sample corpora are small, and more steps only over-fit them. Warmed up, because fresh Adam
moments without it shock every row alike."""


@dataclass(frozen=True)
class TrainConfig:
    """A short fine-tune: the training plan it carries out, and what only a real run needs.

    The plan is the one the forecast reads and the one trained on: every step's learning rate is `plan.lr_at`,
    its Adam settings the plan's. Its tokens per step are whole windows of `seq_len` (rounded down, at least one).
    """

    plan: TrainingPlan = VERIFY_PLAN
    seq_len: int = 128
    grad_clip: float | None = 1.0
    device: str = "cpu"
    bf16: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        whole = max(1, self.plan.tokens_per_step // self.seq_len) * self.seq_len
        if self.plan.tokens_per_step != whole:
            object.__setattr__(self, "plan", replace(self.plan, tokens_per_step=whole))

    @property
    def batch_size(self) -> int:
        return self.plan.tokens_per_step // self.seq_len

    @property
    def steps(self) -> int:
        return int(self.plan.steps or 0)

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        """The run `to_dict` describes, as a verify report, a benchmark suite or the command line states it."""
        plan = TrainingPlan(
            steps=data["steps"],
            tokens_per_step=data["tokens_per_step"],
            learning_rate=data["lr"],
            warmup_steps=data["warmup_steps"],
            lr_schedule=data.get("lr_schedule", "constant"),
            beta1=data["beta1"],
            beta2=data["beta2"],
            eps=data["eps"],
            weight_decay=data["weight_decay"],
        )
        return cls(plan, **{k: data[k] for k in ("seq_len", "grad_clip", "device", "bf16", "seed") if k in data})

    def to_dict(self) -> dict:
        plan = self.plan
        return {
            "steps": self.steps,
            "lr": plan.learning_rate,
            "lr_schedule": plan.lr_schedule,
            "tokens_per_step": plan.tokens_per_step,
            "seq_len": self.seq_len,
            "beta1": plan.beta1,
            "beta2": plan.beta2,
            "eps": plan.eps,
            "weight_decay": plan.weight_decay,
            "warmup_steps": plan.warmup_steps,
            "grad_clip": self.grad_clip,
            "device": self.device,
            "bf16": self.bf16,
            "seed": self.seed,
            "batch_size": self.batch_size,
        }


@dataclass
class TrainResult:
    losses: list[float]
    head_grad_rms: np.ndarray  # per head row: RMS over steps and coordinates of its gradient
    head_eps: float
    seconds: float


def finetune(
    model,
    stream: torch.Tensor,
    config: TrainConfig,
    head_eps: float | None = None,
    after_step: Callable[[int], None] | None = None,
) -> TrainResult:
    """Train `model` in place for `config.steps` steps; `head_eps` None means the default eps everywhere.

    `after_step(n)` is called once n steps are done (the benchmark measures the old text's loss along the
    run there); it may evaluate the model, which is put back into training mode after it.
    """
    plan = config.plan  # the schedule and the Adam settings the forecast reads are the ones trained with
    head_eps = plan.eps if head_eps is None else head_eps
    groups, _ = head_eps_param_groups(model, head_eps, plan.weight_decay, eps=plan.eps)
    optimizer = torch.optim.AdamW(groups, lr=plan.learning_rate, betas=(plan.beta1, plan.beta2), eps=plan.eps)
    _, head = find_head(model)
    generator = torch.Generator().manual_seed(config.seed)
    autocast = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if config.bf16 else contextlib.nullcontext()
    grad_sq = torch.zeros(head.shape[0], dtype=torch.float64, device=head.device)
    losses = []
    started = time.monotonic()
    model.train()
    for step in range(config.steps):
        for group in optimizer.param_groups:
            group["lr"] = plan.lr_at(step)
        batch = sample_batch(stream, config.batch_size, config.seq_len, generator).to(config.device)
        with autocast:
            loss = model(input_ids=batch, labels=batch).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        grad_sq += head.grad.detach().double().pow(2).mean(dim=1)
        optimizer.step()
        value = loss.item()
        if not math.isfinite(value):
            raise FloatingPointError(f"training loss became {value} at step {step}; lower --lr")
        losses.append(value)
        if after_step is not None:
            after_step(step + 1)
            model.train()
    return TrainResult(
        losses=losses,
        head_grad_rms=(grad_sq / max(config.steps, 1)).sqrt().cpu().numpy(),
        head_eps=head_eps,
        seconds=time.monotonic() - started,
    )
