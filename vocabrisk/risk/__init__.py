"""What a profile risks under a training plan: starved rows, and the forgetting forecast in nats.

`plan` is the planned run, `exposure` each row's exposure and the corpus's starved usage, `forecast` the
forecast and `calibration` its per-model constants; `summary` sums them up, once, for every report.
"""
