"""What a fine-tuning run did: per-row head drift, forgetting, learning, and where forgetting lives.

Forgetting is the rise of the mean next-token loss on old text; learning is the fall of the
loss on held-out text of the new corpus. Swapping head matrices between the base and the
trained model splits forgetting: the trained model with the base head ("head restored": the
body's share), the base model with the trained head ("head only": the head's share), and the
trained model with only some rows put back ("edit": what repairing rows after training
recovers).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import torch

from vocabrisk.verify.metrics import top_share
from vocabrisk.verify.mitigation import find_head, head_module

EVAL_BATCH = 16
LOGITS_BUDGET = 1 << 25  # floats of logits computed at once (128 MiB): a window batch of a 150k vocabulary is 2.5 GB
HIDDEN_POSITIONS = 8192  # reference positions whose hidden states measure each row's logit change


@dataclass(frozen=True)
class Evaluator:
    """Mean losses on fixed windows of old text and of held-out new text."""

    reference: torch.Tensor  # (n, seq_len)
    heldout: torch.Tensor
    device: str = "cpu"
    bf16: bool = False

    @torch.no_grad()
    def loss(self, model, windows: torch.Tensor) -> float:
        model.eval()
        total = 0.0
        autocast = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()
        for batch in windows.split(EVAL_BATCH):
            batch = batch.to(self.device)
            with autocast:
                total += model(input_ids=batch, labels=batch).loss.float().item() * len(batch)
        return total / len(windows)

    def losses(self, model) -> dict:
        return {"reference": self.loss(model, self.reference), "heldout": self.loss(model, self.heldout)}


def head_matrix(model) -> torch.Tensor:
    return find_head(model)[1].detach().clone()


@contextlib.contextmanager
def head_rows(model, weight: torch.Tensor, rows: np.ndarray | None = None):
    """Temporarily put `weight` (all rows, or only `rows`) into the model's head."""
    head = find_head(model)[1]
    saved = head.detach().clone()
    with torch.no_grad():
        if rows is None:
            head.copy_(weight)
        else:
            index = torch.as_tensor(np.flatnonzero(rows), device=head.device)
            head[index] = weight[index].to(head.dtype)
    try:
        yield model
    finally:
        with torch.no_grad():
            head.copy_(saved)


@torch.no_grad()
def head_inputs(model, windows: torch.Tensor, device: str, limit: int = HIDDEN_POSITIONS) -> torch.Tensor:
    """The hidden states the head reads on `windows` (captured at its input), up to `limit` positions."""
    captured = []
    module = head_module(model)
    hook = module.register_forward_hook(lambda _m, args, _out: captured.append(args[0].detach().float()))
    model.eval()
    try:
        for batch in windows.split(EVAL_BATCH):
            model(input_ids=batch.to(device))
            if sum(c.shape[0] * c.shape[1] for c in captured) >= limit:
                break
    finally:
        hook.remove()
    return torch.cat([c.reshape(-1, c.shape[-1]) for c in captured])[:limit]


@dataclass
class RunMeasurement:
    """Losses of the trained model and its head swaps, with per-row drift."""

    trained: dict  # reference / heldout losses
    head_restored: dict
    head_only: dict
    edits: dict  # edit name -> {"rows": n, "reference": loss}
    drift: np.ndarray  # L2 change of each head row
    logit_drift: np.ndarray  # mean change of each row's logit on base hidden states of old text


def measure_run(
    trained,
    base,
    base_head: torch.Tensor,
    evaluator: Evaluator,
    base_hidden: torch.Tensor,
    edits: dict[str, np.ndarray | None],
) -> RunMeasurement:
    """Measure a trained model against its base. `edits` maps a name to a row mask to restore.

    A mask of None means the top decile of measured drift (known only after training).
    """
    trained_head = head_matrix(trained)
    delta = (trained_head - base_head).float()
    drift = delta.norm(dim=1).cpu().numpy()
    logit_drift = (base_hidden.to(delta.device) @ delta.T).mean(dim=0).cpu().numpy()
    with head_rows(trained, base_head):
        head_restored = evaluator.losses(trained)
    with head_rows(base, trained_head):
        head_only = evaluator.losses(base)
    edit_results = {}
    for name, rows in edits.items():
        rows = top_decile(drift) if rows is None else rows
        with head_rows(trained, base_head, rows):
            edit_results[name] = {"rows": int(rows.sum()), "reference": evaluator.loss(trained, evaluator.reference)}
    return RunMeasurement(
        trained=evaluator.losses(trained),
        head_restored=head_restored,
        head_only=head_only,
        edits=edit_results,
        drift=drift,
        logit_drift=logit_drift,
    )


def top_decile(values: np.ndarray) -> np.ndarray:
    return top_share(values, 0.1)


def effects(run: RunMeasurement, base: dict) -> dict:
    """Forgetting and learning in nats, and the shares that the head swaps and edits account for."""
    forgetting = run.trained["reference"] - base["reference"]

    def recovered(loss: float) -> float | None:
        return (run.trained["reference"] - loss) / forgetting if forgetting > 0 else None

    return {
        "forgetting": forgetting,
        "learning": base["heldout"] - run.trained["heldout"],
        "forgetting_head_restored": run.head_restored["reference"] - base["reference"],
        "forgetting_head_only": run.head_only["reference"] - base["reference"],
        "learning_head_restored": base["heldout"] - run.head_restored["heldout"],
        "edits": {
            name: {
                **edit,
                "forgetting": edit["reference"] - base["reference"],
                "recovered": recovered(edit["reference"]),
            }
            for name, edit in run.edits.items()
        },
    }


def output_matrix(model) -> torch.Tensor:
    """A float32 copy of the output projection (the head), tied or not."""
    return head_module(model).weight.detach().float().clone()


@torch.no_grad()
def final_hidden(model, windows: torch.Tensor, device: str, bf16: bool = False) -> torch.Tensor:
    """The hidden states the output matrix reads, for every window: (windows, positions, width), float32."""
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    model.eval()
    out = []
    with autocast:
        for batch in windows.split(EVAL_BATCH):
            out.append(model.base_model(input_ids=batch.to(device)).last_hidden_state.float())
    return torch.cat(out)


@torch.no_grad()
def position_losses(hidden: torch.Tensor, matrix: torch.Tensor, windows: torch.Tensor, device: str) -> torch.Tensor:
    """Next-token loss at every position when MATRIX reads HIDDEN: (windows, seq_len - 1), float32.

    Any body with any head, tied heads included: swapping the head parameter would swap a tied
    model's input embeddings too; reading the final hidden states of one model with the output
    matrix of another does not.
    """
    n, length, width = hidden.shape
    reading = hidden[:, :-1].reshape(-1, width)
    targets = windows[:, 1:].reshape(-1)
    rows = max(1, LOGITS_BUDGET // matrix.shape[0])  # positions per product: the logits stay within the budget
    out = []
    for h, ids in zip(reading.split(rows), targets.split(rows), strict=True):
        logits = h.to(device) @ matrix.T
        out.append(torch.nn.functional.cross_entropy(logits, ids.to(device), reduction="none").float().cpu())
    return torch.cat(out).reshape(n, length - 1)


def matrix_loss(hidden: torch.Tensor, matrix: torch.Tensor, windows: torch.Tensor, device: str) -> float:
    """Mean next-token loss when MATRIX reads HIDDEN (see `position_losses`)."""
    return float(position_losses(hidden, matrix, windows, device).double().mean())
