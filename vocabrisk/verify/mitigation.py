"""The head-only Adam epsilon as an API: optimizer parameter groups for any PyTorch model.

Adam's step is `m / (sqrt(v) + eps)`. Rows of tokens a corpus never contains get tiny,
one-sided gradients that a default eps (1e-8) turns into full-size steps; a larger eps on the
output projection alone leaves them nearly still while rows with real gradients keep most
of their step, and the body keeps the default. The head is found by identity
(`model.get_output_embeddings()`, else a parameter the caller names), never by a name
pattern, so a head tied to the input embedding is one shared parameter: the eps then applies
to the shared matrix (or, with `on_tied="skip"`, not at all), and the report says which.

    groups, report = head_eps_param_groups(model, head_eps=1e-5, weight_decay=0.01)
    optimizer = torch.optim.AdamW(groups, lr=2e-5)

With the Hugging Face Trainer, either pass `optimizers=(optimizer, None)` or use
`vocabrisk.verify.hf.HeadEpsTrainer(..., head_eps=1e-5)`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

DEFAULT_EPS = 1e-8  # torch.optim.AdamW's default


@dataclass(frozen=True)
class HeadReport:
    """What the param groups do to the head, so a tied embedding is never changed silently."""

    head: str  # parameter name of the head weight (for a tied head: the embedding's name)
    shape: tuple[int, ...]
    tied: bool
    tied_to: str | None  # the input embedding's parameter name when tied
    head_eps: float | None  # None when on_tied="skip" left a tied head at the default eps
    eps: float
    note: str

    def to_dict(self) -> dict:
        return asdict(self)


def head_module(model):
    """The module whose weight is the output head, through peft wrappers when there are any."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    if not hasattr(base, "get_output_embeddings") and hasattr(base, "module"):  # DistributedDataParallel
        base = base.module
    module = base.get_output_embeddings() if hasattr(base, "get_output_embeddings") else None
    if module is None:
        raise ValueError("no output head found: the model has no get_output_embeddings()")
    copies = getattr(module, "modules_to_save", None)  # peft: lm_head listed in modules_to_save
    if copies is not None:
        module = copies[active_adapter(module)]
    return module


def active_adapter(module) -> str:
    active = getattr(module, "active_adapter", "default")
    return active[0] if isinstance(active, (list, tuple)) else active


def find_head(model, head=None):
    """(name, parameter) of the output projection's weight, found by identity (`head_module`).

    `head` overrides the lookup: an `nn.Module` with a `.weight` or an `nn.Parameter`.
    """
    if head is None:
        try:
            head = head_module(model)
        except ValueError:
            raise ValueError(
                "no output head found: the model has no get_output_embeddings(); pass head=the lm_head"
            ) from None
    weight = getattr(head, "weight", head)
    for name, param in model.named_parameters():
        if param is weight:
            return name, param
    raise ValueError("the given head is not a parameter of the model")


def _input_embedding(model):
    getter = getattr(model, "get_input_embeddings", None)
    module = getter() if getter is not None else None
    return getattr(module, "weight", None)


def head_eps_param_groups(
    model,
    head_eps: float,
    weight_decay: float = 0.0,
    *,
    eps: float = DEFAULT_EPS,
    head=None,
    on_tied: str = "apply",
) -> tuple[list[dict], HeadReport]:
    """AdamW parameter groups: body with and without weight decay, and the head with its own eps.

    Matrices decay, vectors (biases, norm gains) do not, as in most training scripts; the head
    weight decays like any matrix. Every trainable parameter appears in exactly one group.
    A tied head (the same parameter as the input embedding) gets `head_eps` when
    `on_tied="apply"` (the embedding's updates change with it) and the default eps with
    `on_tied="skip"`; either way `report.tied` says so.
    """
    if on_tied not in ("apply", "skip"):
        raise ValueError(f"on_tied must be 'apply' or 'skip', not {on_tied!r}")
    name, weight = find_head(model, head)
    embedding = _input_embedding(model)
    tied = embedding is weight
    tied_to = name if tied else None
    use_head_eps = not tied or on_tied == "apply"
    head_module_bias = getattr(head if head is not None else model.get_output_embeddings(), "bias", None)
    head_params = {id(weight)} | ({id(head_module_bias)} if head_module_bias is not None else set())

    decay, no_decay, head_decay, head_no_decay = [], [], [], []
    for param in model.parameters():  # shared parameters are yielded once
        if not param.requires_grad:
            continue
        if id(param) in head_params and use_head_eps:
            (head_decay if param.ndim >= 2 else head_no_decay).append(param)
        else:
            (decay if param.ndim >= 2 else no_decay).append(param)
    groups = [
        {"params": decay, "weight_decay": weight_decay, "eps": eps, "name": "body"},
        {"params": no_decay, "weight_decay": 0.0, "eps": eps, "name": "body_no_decay"},
        {"params": head_decay, "weight_decay": weight_decay, "eps": head_eps, "name": "head"},
        {"params": head_no_decay, "weight_decay": 0.0, "eps": head_eps, "name": "head_no_decay"},
    ]
    groups = [g for g in groups if g["params"]]
    if not weight.requires_grad:
        note = "the head is frozen: head_eps has nothing to act on"
    elif tied and use_head_eps:
        note = f"head tied to the input embedding ({name}): head_eps {head_eps:g} also applies to its updates"
    elif tied:
        note = f"head tied to the input embedding ({name}): left at the default eps {eps:g} (on_tied='skip')"
    else:
        note = f"untied head {name}: eps {head_eps:g}; every other parameter: eps {eps:g}"
    report = HeadReport(
        head=name,
        shape=tuple(weight.shape),
        tied=tied,
        tied_to=tied_to,
        head_eps=head_eps if use_head_eps else None,
        eps=eps,
        note=note,
    )
    return groups, report


def make_head_eps_optimizer(
    model,
    lr: float,
    head_eps: float,
    *,
    weight_decay: float = 0.0,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = DEFAULT_EPS,
    head=None,
    on_tied: str = "apply",
    **adamw_kwargs,
):
    """`torch.optim.AdamW` over `head_eps_param_groups`; returns (optimizer, report)."""
    import torch

    groups, report = head_eps_param_groups(model, head_eps, weight_decay, eps=eps, head=head, on_tied=on_tied)
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, **adamw_kwargs), report
