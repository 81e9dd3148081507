"""``incident-bot examples list|export``: the confirmed examples in the bot's database, to read or to
review into ``tests/fixtures/``."""

from __future__ import annotations

import argparse
import csv
import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.cli.compose import build_service, load_settings
from bot.cli.errors import NotFound, UsageProblem, no_case
from bot.storage.base import ExampleRecord

MANIFEST_FIELDS = ("file", "accept", "split", "explicit_only", "source", "url", "note")


def _since(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise UsageProblem(f"examples: --since {raw[:40]!r} is not an ISO date (2026-11-01)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _record(example: ExampleRecord) -> dict[str, Any]:
    return {
        "id": example.id,
        "case_id": example.case_id,
        "line": example.line,
        "user_id": example.user_id,
        "channel": example.channel,
        "reply_id": example.reply_id,
        "created_at": example.created_at.isoformat(),
        "rejections": example.rejections,
    }


def _list(examples: list[ExampleRecord], as_json: bool) -> None:
    if as_json:
        print(json.dumps([_record(e) for e in examples], ensure_ascii=False))
        return
    if not examples:
        print("No confirmed examples (a Helpful vote or a pick in Other matches stores one).")
        return
    for e in examples:
        shown = e.line if len(e.line) <= 120 else e.line[:119] + "…"
        rejected = f" · rejected ×{e.rejections}" if e.rejections else ""
        print(
            f"#{e.id:<6} {e.case_id:<10} {e.created_at:%Y-%m-%d} by {e.user_id} in {e.channel}{rejected}\n    {shown}"
        )
    print(f"{len(examples)} example line(s) for {len({e.case_id for e in examples})} case(s)")


def _export(examples: list[ExampleRecord], directory: Path) -> None:
    """One paste file per confirmation (a reply's lines for one case), and a manifest of rows in the
    real-paste corpus's format, left for a person to review: none has a public URL yet."""
    groups: dict[tuple[int, str], list[ExampleRecord]] = defaultdict(list)
    for e in examples:
        groups[(e.reply_id, e.case_id)].append(e)
    pastes = directory / "pastes"
    pastes.mkdir(parents=True, exist_ok=True)
    rows = []
    for (reply_id, case_id), group in sorted(groups.items()):
        name = f"confirmed-{case_id.lower()}-reply{reply_id}.txt"
        lines = list(dict.fromkeys(e.line for e in group))
        (pastes / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        people = len({e.user_id for e in group})
        when = min(e.created_at for e in group).date().isoformat()
        note = f"confirmed in Slack by {people} person(s) on {when}; redacted; review and find a public source"
        rows.append(
            {
                "file": name,
                "accept": case_id,
                "split": "dev",
                "explicit_only": "false",
                "source": "slack",
                "url": "",
                "note": note,
            }
        )
    with (directory / "manifest.tsv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, MANIFEST_FIELDS, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} paste file(s) and manifest.tsv to {directory}")


def cmd_examples(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    service = build_service(load_settings(overrides))
    if args.examples_command == "delete":
        try:
            found = next((e for e in service.examples.stored() if e.id == args.id), None)
            gone = service.examples.delete(args.id) if found is not None else 0
        finally:
            service.storage.close()
        if found is None or not gone:
            raise NotFound(f"examples: no example #{args.id} (examples list shows the ids)")
        print(
            f"deleted example #{args.id} of {found.case_id} ({gone} confirmation(s));"
            " every replica drops it on its next check"
        )
        return 0
    try:
        case = service.get_case(args.case) if args.case else None
        if args.case and case is None:
            raise no_case(args.case, [c.id for c in service.suggest_ids(args.case)])
        examples = service.examples.stored(case.id if case else None, _since(args.since))
    finally:
        service.storage.close()
    if args.examples_command == "list":
        _list(examples, args.json)
    else:
        _export(examples, Path(args.dir))
    return 0
