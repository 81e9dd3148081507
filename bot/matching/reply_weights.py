"""The bundled reply model: written by ``python -m bench.reply_fit`` from the `dev` real pastes, the
same numbers as ``reply_model.json`` beside it (a test reloads that file and checks they agree). Python
data, so the matcher's pure code reads no files."""

from __future__ import annotations

from bot.matching.decision import ReplyModel

REPLY_MODEL = ReplyModel(
    weights={
        "exact": 2.0502,
        "strong": 0.0,
        "score": 0.9718,
        "margin": 0.2133,
        "lines": 0.0904,
        "signatures": 0.6172,
        "fallout_only": 0.1388,
        "text_only": -2.0519,
        "decisive_elsewhere": 0.0364,
        "text_agrees": 0.6106,
        "job_error": -0.2542,
        "length": -0.0392,
    },
    bias=0.839,
    threshold=0.6295,
)
