"""Fit the unprompted reply decision on the `dev` real pastes, with cross-validation grouped by project.

    python -m bench.reply_fit            # fit, print the cross-validated figures, write the model
    python -m bench.reply_fit --check    # fit and compare with the bundled model (exit 1 when it differs)

Every `dev` paste is matched once. A paste whose best case has no proof of its own never replies (the
rule outside the model); the others give the features of ``bot.matching.decision.FEATURES`` and a label:
1 when a reply would name only acceptable cases of a paste not marked explicit-only, else 0 (a wrong case,
an unrelated error, a paste that should wait to be asked). A logistic regression (scikit-learn, L2) is
fitted on folds grouped by project, so a project's pastes are never scored by a model that saw them. The
threshold is the lowest out-of-fold probability at which wrong replies stay at or under 1% of known
failures and replies to unrelated errors at or under 2% of them, over the whole of `dev`, with a margin:
the threshold is never below the highest out-of-fold probability a wrong or unrelated reply got below
those limits plus ``--guard``. The final weights are fitted on all of `dev`; the threshold is the
cross-validated one. Writes ``bot/matching/reply_model.json`` and ``bot/matching/reply_weights.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from bench.quality import ROOT, load_real
from bot.library.case_store import load_library
from bot.matching.decision import FEATURES, ReplyModel
from bot.matching.matcher import Matcher
from bot.matching.quality import Labelled

MODEL_JSON = ROOT / "bot" / "matching" / "reply_model.json"
MODEL_PY = ROOT / "bot" / "matching" / "reply_weights.py"
MAX_WRONG = 0.01
MAX_UNRELATED = 0.02
FOLDS = 5
C = 1.0


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    project: str
    positive: bool
    provable: bool  # a known failure not marked explicit-only
    features: list[float] | None  # None: no proof, never a reply
    label: int  # 1: a reply naming the best case would be right and wanted
    wrong: bool  # a reply would name a case the paste does not accept (or answer an unrelated error)


def rows_of(matcher: Matcher, pastes: list[Labelled]) -> list[Row]:
    rows = []
    for paste in pastes:
        result = matcher.match(paste.text, slack_encoded=False)
        values = result.reply_features
        best = result.matches[0].case_id if result.matches else None
        right = best is not None and best in paste.accept
        rows.append(
            Row(
                name=paste.name,
                project=paste.project,
                positive=bool(paste.accept),
                provable=bool(paste.accept) and not paste.explicit_only,
                features=None if values is None else [values[name] for name in FEATURES],
                label=int(right and bool(paste.accept) and not paste.explicit_only),
                wrong=not right,
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class Figures:
    threshold: float
    reply: float  # right unprompted replies / provable known failures
    wrong: float  # replies naming a wrong case / known failures
    unrelated: float  # replies to unrelated errors / unrelated errors
    precision: float


def figures(rows: list[Row], probability: list[float | None], threshold: float) -> Figures:
    positives = [r for r in rows if r.positive]
    provable = [r for r in rows if r.provable]
    negatives = [r for r in rows if not r.positive]
    replied = {r.name for r, p in zip(rows, probability, strict=True) if p is not None and p >= threshold}
    right = sum(r.name in replied and r.label == 1 for r in provable)
    wrong = sum(r.name in replied and r.wrong for r in positives)
    unrelated = sum(r.name in replied for r in negatives)
    replies = len(replied)
    return Figures(
        threshold=threshold,
        reply=right / len(provable) if provable else 0.0,
        wrong=wrong / len(positives) if positives else 0.0,
        unrelated=unrelated / len(negatives) if negatives else 0.0,
        precision=(replies - wrong - unrelated) / replies if replies else 1.0,
    )


def out_of_fold(rows: list[Row]) -> list[float | None]:
    """Each eligible row's probability from a model fitted on the other projects' rows."""
    eligible = [i for i, r in enumerate(rows) if r.features is not None]
    x = np.array([rows[i].features for i in eligible])
    y = np.array([rows[i].label for i in eligible])
    groups = np.array([rows[i].project for i in eligible])
    found: list[float | None] = [None] * len(rows)
    for train, held in GroupKFold(n_splits=FOLDS).split(x, y, groups):
        model = LogisticRegression(C=C, max_iter=5000)
        model.fit(x[train], y[train])
        for index, p in zip(held, model.predict_proba(x[held])[:, 1], strict=True):
            found[eligible[int(index)]] = float(p)
    return found


def choose_threshold(rows: list[Row], probability: list[float | None], guard: float) -> float:
    """The lowest out-of-fold probability at which the limits hold (every distinct one tried, lowest
    first), raised past any bad row just under it: a wrong or unrelated reply within ``guard`` below the
    threshold is one refit away from being sent."""
    for threshold in sorted({p for p in probability if p is not None}):
        found = figures(rows, probability, threshold)
        if found.wrong <= MAX_WRONG and found.unrelated <= MAX_UNRELATED:
            bad = [p for r, p in zip(rows, probability, strict=True) if p is not None and r.wrong]
            near = [p + guard for p in bad if threshold - guard <= p < threshold]
            return round(max([threshold, *near]), 4)
    return 1.0


def fit(rows: list[Row], threshold: float) -> ReplyModel:
    eligible = [r for r in rows if r.features is not None]
    model = LogisticRegression(C=C, max_iter=5000)
    model.fit(np.array([r.features for r in eligible]), np.array([r.label for r in eligible]))
    weights = {name: round(float(w), 4) for name, w in zip(FEATURES, model.coef_[0], strict=True)}
    return ReplyModel(weights=weights, bias=round(float(model.intercept_[0]), 4), threshold=threshold)


def write(model: ReplyModel, note: dict[str, object]) -> None:
    data = {"weights": dict(model.weights), "bias": model.bias, "threshold": model.threshold, "fitted": note}
    MODEL_JSON.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    weights = ",\n".join(f'        "{name}": {value!r}' for name, value in model.weights.items())
    MODEL_PY.write_text(
        '"""The bundled reply model: written by ``python -m bench.reply_fit`` from the `dev` real pastes, the\n'
        "same numbers as ``reply_model.json`` beside it (a test reloads that file and checks they agree). Python\n"
        'data, so the matcher\'s pure code reads no files."""\n\n'
        "from __future__ import annotations\n\n"
        "from bot.matching.decision import ReplyModel\n\n"
        "REPLY_MODEL = ReplyModel(\n"
        f"    weights={{\n{weights},\n    }},\n"
        f"    bias={model.bias!r},\n"
        f"    threshold={model.threshold!r},\n"
        ")\n",
        encoding="utf-8",
    )


def _pct(value: float) -> str:
    return f"{value:.1%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the bundled model, write nothing")
    parser.add_argument("--guard", type=float, default=0.05, help="room kept above a bad reply's probability")
    args = parser.parse_args(argv)
    library = load_library(ROOT / "cases")
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    rows = rows_of(matcher, load_real("dev"))
    oof = out_of_fold(rows)
    threshold = choose_threshold(rows, oof, args.guard)
    cv = figures(rows, oof, threshold)
    model = fit(rows, threshold)
    full = [
        None if r.features is None else model.probability(dict(zip(FEATURES, r.features, strict=True))) for r in rows
    ]
    fitted = figures(rows, full, threshold)
    eligible = sum(r.features is not None for r in rows)
    projects = len({r.project for r in rows})
    print(
        f"dev: {len(rows)} pastes from {projects} projects, {eligible} with proof of their own; "
        f"{FOLDS} folds by project"
    )
    print(
        "| dev, reply decision | threshold | right unprompted reply | wrong replies | replies to unrelated "
        "| precision |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for label, found in (("cross-validated (out of fold)", cv), ("final model, fitted on all of dev", fitted)):
        print(
            f"| {label} | {found.threshold:.3f} | {_pct(found.reply)} | {_pct(found.wrong)} | "
            f"{_pct(found.unrelated)} | {_pct(found.precision)} |"
        )
    print("weights:", json.dumps(dict(model.weights)), "bias:", model.bias)
    note = {
        "pastes": len(rows),
        "projects": projects,
        "with_proof": eligible,
        "folds": FOLDS,
        "C": C,
        "limits": {"wrong": MAX_WRONG, "unrelated": MAX_UNRELATED},
        "cross_validated": {
            "reply": round(cv.reply, 4),
            "wrong": round(cv.wrong, 4),
            "unrelated": round(cv.unrelated, 4),
        },
    }
    if args.check:
        bundled = json.loads(MODEL_JSON.read_text(encoding="utf-8"))
        same = bundled["weights"] == dict(model.weights) and bundled["threshold"] == model.threshold
        print("bundled model:", "the same" if same else "differs (run python -m bench.reply_fit)")
        return 0 if same else 1
    write(model, note)
    print(f"wrote {MODEL_JSON.relative_to(ROOT)} and {MODEL_PY.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
