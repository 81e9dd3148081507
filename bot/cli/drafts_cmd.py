"""``incident-bot cases drafts``, ``cases draft export ID`` and ``cases review ID``: the draft and review
loop from the command line (the same use cases Slack and the console call)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.app.service import IncidentService
from bot.cli.compose import build_service, load_settings
from bot.cli.errors import NotFound, UsageProblem, no_case
from bot.library.drafts import plain_field
from bot.ops.settings import Settings


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    return load_settings(overrides)


def _service(args: argparse.Namespace) -> IncidentService:
    return build_service(_settings(args))


def cmd_drafts(args: argparse.Namespace) -> int:
    service = _service(args)
    try:
        drafts = service.storage.list_drafts()
    finally:
        service.storage.close()
    if not drafts:
        print("No drafts. Start one from an answer that found no case (Start a case draft), or :draft in the console.")
        return 0
    for draft in drafts:
        title = plain_field(draft.fields.get("title_en") or draft.fields.get("title_ko") or "(no title)")
        where = f" · {plain_field(draft.permalink)}" if draft.permalink else ""
        done = f" · exported as {draft.exported_as}" if draft.exported_as else ""
        author = plain_field(draft.author)
        print(f"D-{draft.id}  {draft.created_at:%Y-%m-%d %H:%M}  by {author}{where}{done}\n    {title}")
    return 0


def cmd_draft_export(args: argparse.Namespace) -> int:
    settings = _settings(args)
    service = build_service(settings)
    directory = Path(args.dir) if args.dir else Path(settings.cases_dir)
    try:
        raw = str(args.id).upper().removeprefix("D-")
        if not raw.isdigit():
            raise UsageProblem(f"{args.id[:40]!r} is not a draft id (D-12 or 12)")
        path, case_id = service.drafts.export(int(raw), directory, list(service.library.cases))
    except LookupError as exc:
        raise NotFound(f"{exc}; `incident-bot cases drafts` lists them") from None
    except FileExistsError as exc:
        raise UsageProblem(f"{exc}: edit that case, or export another draft") from None
    finally:
        service.storage.close()
    print(f"wrote {path} as {case_id}; check it with `incident-bot cases validate {directory}`")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    service = _service(args)
    if service.get_case(args.id) is None:
        service.storage.close()
        raise no_case(args.id, [c.id for c in service.suggest_ids(args.id)])
    try:
        reply = service.review(args.id, args.by, args.note or "", ("en", "ko"))
    finally:
        service.storage.close()
    first = reply.plain.split("\n\n", 1)[0]
    if "reviewed by" not in first:  # refused: the case fails validation
        print(f"incident-bot: {first}", file=sys.stderr)
        return 1
    print(first)
    return 0
