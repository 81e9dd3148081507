"""Matcher quality on the written fixtures and on the real-paste corpus (``dev`` and ``test``), each next
to a plain BM25 ranking of the case files computed in the same run.

    make quality                       # the table
    python -m bench.quality --show dev # and every dev paste the matcher gets wrong
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from bench.curves import draw
from bot.library.case_store import load_library
from bot.matching.matcher import Matcher
from bot.matching.quality import Labelled, Outcome, Report, bm25_baseline, evaluate

ROOT = Path(__file__).resolve().parent.parent
PASTES = ROOT / "tests" / "fixtures" / "pastes"
REAL = ROOT / "tests" / "fixtures" / "real"


def load_pastes(directory: Path = PASTES) -> list[Labelled]:
    """The written fixture pastes: a positive whose label expects no reply is explicit-only."""
    pastes = []
    for meta_path in sorted(directory.glob("*.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        text = meta_path.with_suffix(".txt").read_bytes()
        accept = tuple(meta["accept"])
        pastes.append(Labelled(meta_path.stem, text, accept, explicit_only=bool(accept) and not meta["reply"]))
    return pastes


def aliases(directory: Path = REAL) -> dict[str, str]:
    """A source's other names (a renamed repository, a mirror) to the project it belongs to, lower case."""
    with (directory / "aliases.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return {row["name"].lower(): row["project"].lower() for row in rows}


def project_of(source: str, other_name: dict[str, str]) -> str:
    """The project a source belongs to, whatever its name: ``aliases.tsv``; GitHub names are case-insensitive."""
    name = source.lower()
    return other_name.get(name, name)


def load_real(split: str, directory: Path = REAL) -> list[Labelled]:
    """The real pastes of one split (``dev`` or ``test``) from the manifest."""
    with (directory / "manifest.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    other_name = aliases(directory)
    return [
        Labelled(
            row["file"],
            (directory / "pastes" / row["file"]).read_bytes(),
            () if row["accept"] == "negative" else tuple(row["accept"].split(",")),
            explicit_only=row["explicit_only"] == "true",
            project=project_of(row["source"], other_name),
        )
        for row in rows
        if row["split"] == split
    ]


def _pct(value: float) -> str:
    return f"{value:.1%}"


def _line(o: Outcome) -> str:
    got = ", ".join(f"{c}:{s}" for c, s in zip(o.ranked[:3], o.scores[:3], strict=False))
    return f"  {o.name:60} accept={','.join(o.accept) or 'negative'} replied={o.replied} got=[{got}]"


def misses(report: Report) -> list[Outcome]:
    return [
        o
        for o in report.outcomes
        if (o.positive and (not o.hit1 or o.wrong_reply or (not o.explicit_only and not o.correct_reply)))
        or (not o.positive and o.replied)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", choices=["fixtures", "dev", "test"], action="append", default=[])
    parser.add_argument(
        "--sets",
        default="fixtures,dev,test",
        help="which sets to evaluate (comma-separated); the per-class table needs dev and test",
    )
    parser.add_argument("--no-write", action="store_true", help=f"do not rewrite {DOCS.relative_to(ROOT)}/")
    args = parser.parse_args(argv)
    library = load_library(ROOT / "cases")
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    cases = list(library.cases.values())
    chosen = set(args.sets.split(","))
    loaders = {"fixtures": load_pastes, "dev": lambda: load_real("dev"), "test": lambda: load_real("test")}
    sets = {name: load() for name, load in loaders.items() if name in chosen}
    reports: dict[str, Report] = {}
    table = [
        "| set | pastes (known / unrelated) | hit@1 | hit@3 | unprompted reply | wrong replies "
        "| replies to unrelated | empty | BM25 hit@1 | BM25 hit@3 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(table))
    for name, pastes in sets.items():
        report = evaluate(matcher, pastes)
        base = bm25_baseline(cases, pastes).summary()
        s = report.summary()
        table.append(
            f"| {name} | {len(pastes)} ({s['positives']:.0f} / {s['negatives']:.0f}) | {_pct(s['hit@1'])} | "
            f"{_pct(s['hit@3'])} | {_pct(s['reply'])} | {_pct(s['wrong_reply'])} | {_pct(s['negative_reply'])} | "
            f"{_pct(s['empty'])} | {_pct(base['hit@1'])} | {_pct(base['hit@3'])} |"
        )
        print(table[-1])
        reports[name] = report
        if name in args.show:
            for outcome in misses(report):
                print(_line(outcome), file=sys.stderr)
    if {"dev", "test"} <= set(reports):
        classes = class_table(reports, {case.id: case.failure_class or case.id for case in cases})
        print()
        print(classes)
        if not args.no_write and set(reports) == set(loaders):
            write_docs(table, classes, reports, matcher.reply_model.threshold)
    return 0


DOCS = ROOT / "docs" / "quality"


def write_docs(table: list[str], classes: str, reports: dict[str, Report], threshold: float) -> None:
    """The tables and the precision–recall curve, for the docs to show (rewritten by every full run)."""
    DOCS.mkdir(parents=True, exist_ok=True)
    head = "<!-- written by `make quality` (bench/quality.py); do not edit -->\n\n"
    figures = "# Quality figures\n\n" + head + "\n".join(table) + "\n"
    (DOCS / "figures.md").write_text(figures, encoding="utf-8")
    per_class = "# Quality per failure class\n\n" + head + classes + "\n"
    (DOCS / "classes.md").write_text(per_class, encoding="utf-8")
    draw(reports, threshold, DOCS / "reply-pr.svg")
    print(f"\nwrote {DOCS.relative_to(ROOT)}/figures.md, classes.md and reply-pr.svg", file=sys.stderr)


def class_table(reports: dict[str, Report], classes: dict[str, str]) -> str:
    """Per failure class (of a paste's first acceptable case): real pastes and hit@1 / unprompted reply in
    ``dev`` and ``test``."""
    rows: dict[str, dict[str, list[Outcome]]] = {}
    for split in ("dev", "test"):
        for outcome in reports[split].outcomes:
            if outcome.positive:
                rows.setdefault(classes.get(outcome.accept[0], "?"), {}).setdefault(split, []).append(outcome)

    def cell(found: list[Outcome]) -> str:
        if not found:
            return "– | – | –"
        hit = sum(o.hit1 for o in found) / len(found)
        replied = [o for o in found if not o.explicit_only]
        reply = sum(o.correct_reply for o in replied) / len(replied) if replied else 0.0
        return f"{len(found)} | {_pct(hit)} | {_pct(reply) if replied else '–'}"

    lines = [
        "| failure class | dev pastes | dev hit@1 | dev reply | test pastes | test hit@1 | test reply |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in sorted(rows):
        lines.append(f"| {name} | {cell(rows[name].get('dev', []))} | {cell(rows[name].get('test', []))} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
