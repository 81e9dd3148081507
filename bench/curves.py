"""The reply decision's precision–recall curve per set, drawn with matplotlib into an SVG whose bytes depend
only on the figures (fixed hash salt, no date, text as paths), so a rerun on the same data rewrites the
same file.

Recall is right unprompted replies over known failures not marked explicit-only; precision is right
replies over all unprompted replies (unrelated errors included). Each point is one threshold on the reply
model's probability; a paste without proof of its own never replies at any threshold, which is why
recall stops short of 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.matching.quality import Report


@dataclass(frozen=True, slots=True)
class Point:
    threshold: float
    precision: float
    recall: float


def curve(report: Report) -> list[Point]:
    """Every distinct threshold, highest first (recall grows along the list)."""
    provable = [o for o in report.outcomes if o.positive and not o.explicit_only]
    scored = [o for o in report.outcomes if o.probability is not None]
    points = []
    for threshold in sorted({o.probability for o in scored if o.probability is not None}, reverse=True):
        replied = [o for o in scored if o.probability is not None and o.probability >= threshold]
        right = [o for o in replied if o.positive and not o.explicit_only and all(c in o.accept for c in o.ranked[:1])]
        precision = len(right) / len(replied) if replied else 1.0
        recall = len(right) / len(provable) if provable else 0.0
        points.append(Point(threshold, precision, recall))
    return points


def draw(reports: Mapping[str, Report], threshold: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "incident-bot", "svg.fonttype": "path", "font.size": 9})
    figure, axes = plt.subplots(figsize=(6.0, 4.2))
    for name, report in reports.items():
        points = curve(report)
        if not points:
            continue
        recall = [0.0, *(p.recall for p in points)]
        precision = [points[0].precision, *(p.precision for p in points)]
        axes.step(recall, precision, where="post", label=name, linewidth=1.4)
        chosen = [p for p in points if p.threshold >= threshold]
        if chosen:
            axes.plot([chosen[-1].recall], [chosen[-1].precision], marker="o", color=axes.lines[-1].get_color())
    axes.set_xlabel("recall: right unprompted replies / known failures")
    axes.set_ylabel("precision: right replies / replies")
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.5, 1.01)
    axes.grid(True, linewidth=0.4, alpha=0.5)
    axes.set_title(f"Unprompted reply decision (dot: the bundled threshold {threshold:.3f})")
    axes.legend(loc="lower left")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(figure)
