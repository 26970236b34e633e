"""The head-only epsilon with the Hugging Face Trainer (needs transformers and accelerate).

    trainer = HeadEpsTrainer(model=model, args=args, train_dataset=data, head_eps=1e-5)

keeps everything the Trainer does (its learning rate, betas, weight decay and scheduler from
`TrainingArguments`) and only gives the output projection its own eps. Without a subclass,
`optimizers=(optimizer_for_trainer(model, args, head_eps), None)` does the same.
"""

from __future__ import annotations

from transformers import Trainer

from vocabrisk.verify.mitigation import make_head_eps_optimizer


def optimizer_for_trainer(model, args, head_eps: float, *, on_tied: str = "apply"):
    """An AdamW with the head's eps, set up from TrainingArguments as the Trainer's own would be."""
    return _from_args(model, args, head_eps, on_tied)[0]


def _from_args(model, args, head_eps: float, on_tied: str):
    return make_head_eps_optimizer(
        model,
        lr=args.learning_rate,
        head_eps=head_eps,
        weight_decay=args.weight_decay,
        betas=(args.adam_beta1, args.adam_beta2),
        eps=args.adam_epsilon,
        on_tied=on_tied,
    )


class HeadEpsTrainer(Trainer):
    """A Trainer whose optimizer is AdamW with `head_eps` on the output projection only.

    `head_report` (a `HeadReport`) says after `create_optimizer` whether the head was tied.
    """

    def __init__(self, *args, head_eps: float, on_tied: str = "apply", **kwargs):
        self.head_eps = head_eps
        self.on_tied = on_tied
        self.head_report = None
        super().__init__(*args, **kwargs)

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            target = self.model if model is None else model
            self.optimizer, self.head_report = _from_args(target, self.args, self.head_eps, self.on_tied)
        return self.optimizer
