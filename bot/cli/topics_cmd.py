"""``incident-bot topics [--json]``: the library's vocabulary with counts and aliases."""

from __future__ import annotations

import argparse
import json

from bot.cli.compose import load_cases, load_settings, reader_snapshot_root
from bot.library.case_store import require_cases
from bot.library.topics import KINDS, Vocabulary


def cmd_topics(args: argparse.Namespace) -> int:
    settings = load_settings({"CASES_DIR": args.cases} if getattr(args, "cases", None) else {})
    library = require_cases(load_cases(settings.cases_dir, reader_snapshot_root(settings)), settings.cases_dir)
    vocabulary = Vocabulary.of(library.summaries.values())
    if args.json:
        data = {
            kind: [
                {"name": t.name, "count": len(t.cases), "aliases": list(t.aliases), "cases": list(t.cases)}
                for t in vocabulary.by_kind(kind)
            ]
            for kind in KINDS
        }
        print(json.dumps(data, ensure_ascii=False))
        return 0
    for kind in KINDS:
        print(f"{kind}:")
        for topic in vocabulary.by_kind(kind):
            also = f"  (also {', '.join(topic.aliases)})" if topic.aliases else ""
            print(f"  {topic.name:<34} {len(topic.cases):>3}{also}")
    return 0
