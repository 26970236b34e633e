"""The head-only epsilon as an API: param groups for tied and untied heads of several families."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from vocabrisk.verify.mitigation import head_eps_param_groups, make_head_eps_optimizer  # noqa: E402

HEAD_EPS = 1e-5
SMALL = {"vocab_size": 64, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
         "num_attention_heads": 2}  # fmt: skip


def gpt2(tied: bool):
    config = transformers.GPT2Config(vocab_size=64, n_embd=16, n_layer=1, n_head=2, n_positions=32,
                                     bos_token_id=0, eos_token_id=0, tie_word_embeddings=tied)  # fmt: skip
    return transformers.GPT2LMHeadModel(config)


def llama(tied: bool):
    return transformers.LlamaForCausalLM(
        transformers.LlamaConfig(**SMALL, num_key_value_heads=2, tie_word_embeddings=tied)
    )


def neox(tied: bool):
    return transformers.GPTNeoXForCausalLM(transformers.GPTNeoXConfig(**SMALL, tie_word_embeddings=tied))


def qwen2(tied: bool):
    return transformers.Qwen2ForCausalLM(
        transformers.Qwen2Config(**SMALL, num_key_value_heads=2, tie_word_embeddings=tied)
    )


FAMILIES = [
    pytest.param(build, tied, id=f"{build.__name__}-{'tied' if tied else 'untied'}")
    for build in (gpt2, llama, neox, qwen2)
    for tied in (False, True)
]


def _group_of(groups: list[dict], param) -> dict:
    (group,) = [g for g in groups if any(p is param for p in g["params"])]
    return group


@pytest.mark.parametrize(("build", "tied"), FAMILIES)
def test_every_parameter_once_and_the_head_alone_has_head_eps(build, tied):
    model = build(tied)
    groups, report = head_eps_param_groups(model, HEAD_EPS, weight_decay=0.01)
    head = model.get_output_embeddings().weight
    assert report.tied is tied
    assert (model.get_input_embeddings().weight is head) is tied
    grouped = [id(p) for g in groups for p in g["params"]]
    assert len(grouped) == len(set(grouped))
    assert set(grouped) == {id(p) for p in model.parameters()}
    head_group = _group_of(groups, head)
    assert head_group["eps"] == HEAD_EPS and head_group["weight_decay"] == 0.01
    others = [p for g in groups if g is not head_group for p in g["params"]]
    assert others and all(_group_of(groups, p)["eps"] == 1e-8 for p in others)
    assert all(_group_of(groups, p)["weight_decay"] == 0.0 for p in model.parameters() if p.ndim < 2)
    if tied:
        assert report.tied_to == report.head and "tied" in report.note


@pytest.mark.parametrize("build", [gpt2, llama])
def test_a_tied_head_can_be_left_at_the_default_eps_and_says_so(build):
    model = build(True)
    groups, report = head_eps_param_groups(model, HEAD_EPS, on_tied="skip")
    assert report.tied and report.head_eps is None and "skip" in report.note
    assert _group_of(groups, model.get_output_embeddings().weight)["eps"] == 1e-8
    assert all(g["eps"] == 1e-8 for g in groups)


def test_a_model_without_get_output_embeddings_takes_the_head_by_identity():
    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Linear(8, 8)
            self.out = torch.nn.Linear(8, 32, bias=False)

    model = Tiny()
    with pytest.raises(ValueError, match="pass head="):
        head_eps_param_groups(model, HEAD_EPS)
    groups, report = head_eps_param_groups(model, HEAD_EPS, head=model.out)
    assert report.head == "out.weight" and not report.tied
    assert _group_of(groups, model.out.weight)["eps"] == HEAD_EPS
    with pytest.raises(ValueError, match="not a parameter"):
        head_eps_param_groups(model, HEAD_EPS, head=torch.nn.Parameter(torch.zeros(2)))


def test_frozen_parameters_are_left_out():
    model = gpt2(False)
    model.transformer.wte.weight.requires_grad_(False)
    groups, _ = head_eps_param_groups(model, HEAD_EPS)
    assert all(p is not model.transformer.wte.weight for g in groups for p in g["params"])


def _train(model, optimizer, steps: int) -> None:
    data = torch.Generator().manual_seed(0)
    for _ in range(steps):
        batch = torch.randint(0, 32, (4, 16), generator=data)  # tokens 32-63 never occur
        model(input_ids=batch, labels=batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def test_a_raised_head_eps_keeps_never_seen_rows_still_and_fed_rows_learning():
    """The mechanism itself, once the model gives never-seen tokens little probability."""
    torch.manual_seed(0)
    warm = gpt2(False)
    _train(warm, torch.optim.AdamW(warm.parameters(), lr=1e-2), 60)
    drift = {}
    for head_eps in (1e-8, 3e-3):
        model = gpt2(False)
        model.load_state_dict(warm.state_dict())
        before = model.lm_head.weight.detach().clone()
        _train(model, make_head_eps_optimizer(model, lr=1e-2, head_eps=head_eps)[0], 30)
        change = (model.lm_head.weight.detach() - before).norm(dim=1)
        drift[head_eps] = (change[32:].mean().item(), change[:32].mean().item())
    (starved_plain, fed_plain), (starved_fixed, fed_fixed) = drift[1e-8], drift[3e-3]
    assert starved_fixed < starved_plain / 5
    assert fed_fixed > fed_plain / 2


def test_trainer_recipes_build_an_optimizer_with_the_head_eps(tmp_path):
    pytest.importorskip("accelerate")
    from vocabrisk.verify.hf import HeadEpsTrainer, optimizer_for_trainer

    args = transformers.TrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True,
                                          learning_rate=3e-4, weight_decay=0.1)  # fmt: skip
    model = llama(True)
    trainer = HeadEpsTrainer(model=model, args=args, head_eps=HEAD_EPS)
    optimizer = trainer.create_optimizer()
    head = model.get_output_embeddings().weight
    assert _group_of(optimizer.param_groups, head)["eps"] == HEAD_EPS
    assert _group_of(optimizer.param_groups, head)["lr"] == 3e-4
    assert trainer.head_report.tied

    model = gpt2(False)
    plain = transformers.Trainer(
        model=model, args=args, optimizers=(optimizer_for_trainer(model, args, HEAD_EPS), None)
    )
    assert _group_of(plain.optimizer.param_groups, model.lm_head.weight)["eps"] == HEAD_EPS
    assert _group_of(plain.optimizer.param_groups, model.lm_head.weight)["weight_decay"] == 0.1
