"""The prior of a run: how much the base model relies on each token, and the old text the forecast reads.

`choose` picks it once per model: a reference's counts, the model's own text (`self_samples`), or the model's
files (`vocabrisk.model.priors`); `old_text` keeps the reference's token ids for the forecast.
"""
