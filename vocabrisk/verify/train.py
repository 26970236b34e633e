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
from dataclasses import asdict, dataclass

import numpy as np
import torch

from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.verify.data import sample_batch
from vocabrisk.verify.mitigation import DEFAULT_EPS, find_head, head_eps_param_groups


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 150  # a short check: the sample corpora are small, and more steps only over-fit them
    lr: float = 1e-3
    tokens_per_step: int = 2048
    seq_len: int = 128
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = DEFAULT_EPS
    weight_decay: float = 0.0
    warmup_steps: int = 15  # linear; fresh Adam moments without it shock every row alike
    grad_clip: float | None = 1.0
    device: str = "cpu"
    bf16: bool = False
    seed: int = 0

    @property
    def batch_size(self) -> int:
        return max(1, self.tokens_per_step // self.seq_len)

    def to_dict(self) -> dict:
        return {**asdict(self), "batch_size": self.batch_size}

    def plan(self) -> TrainingPlan:
        """The training plan this run carries out, as risk and forecast read it (whole windows per step)."""
        return TrainingPlan(
            tokens_per_step=self.batch_size * self.seq_len,
            steps=self.steps,
            learning_rate=self.lr,
            warmup_steps=self.warmup_steps,
            beta1=self.beta1,
            beta2=self.beta2,
            eps=self.eps,
            weight_decay=self.weight_decay,
        )


@dataclass
class TrainResult:
    losses: list[float]
    head_grad_rms: np.ndarray  # per head row: RMS over steps and coordinates of its gradient
    head_eps: float
    seconds: float


def finetune(model, stream: torch.Tensor, config: TrainConfig, head_eps: float | None = None) -> TrainResult:
    """Train `model` in place for `config.steps` steps; `head_eps` None means the default eps everywhere."""
    head_eps = config.eps if head_eps is None else head_eps
    groups, _ = head_eps_param_groups(model, head_eps, config.weight_decay, eps=config.eps)
    optimizer = torch.optim.AdamW(groups, lr=config.lr, betas=(config.beta1, config.beta2), eps=config.eps)
    _, head = find_head(model)
    generator = torch.Generator().manual_seed(config.seed)
    autocast = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if config.bf16 else contextlib.nullcontext()
    grad_sq = torch.zeros(head.shape[0], dtype=torch.float64, device=head.device)
    losses = []
    plan = config.plan()  # the schedule the forecast reads is the one trained on
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
    return TrainResult(
        losses=losses,
        head_grad_rms=(grad_sq / max(config.steps, 1)).sqrt().cpu().numpy(),
        head_eps=head_eps,
        seconds=time.monotonic() - started,
    )
