"""The bundled reply model: written by ``python -m bench.reply_fit`` from the `dev` real pastes, the
same numbers as ``reply_model.json`` beside it (a test reloads that file and checks they agree). Python
data, so the matcher's pure code reads no files."""

from __future__ import annotations

from bot.matching.decision import ReplyModel

REPLY_MODEL = ReplyModel(
    weights={
        "exact": 1.3426,
        "strong": 0.0,
        "score": 0.6411,
        "margin": -0.0548,
        "lines": 0.1239,
        "signatures": 0.5418,
        "fallout_only": 0.1035,
        "text_only": -1.3445,
        "decisive_elsewhere": 0.0242,
        "text_agrees": 0.9638,
        "job_error": -0.565,
        "length": 0.0517,
    },
    bias=2.1137,
    threshold=0.9648,
)
