"""The command line: parses arguments (``bot.cli.parser``) and runs the chosen command on what
``bot.cli.compose`` builds. Every failure a user can cause ends in one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.app.records import match_record
from bot.app.service import IncidentService
from bot.cli.actions_cmd import cmd_actions
from bot.cli.compose import (
    build_reader,
    build_service,
    build_services,
    load_cases,
    load_settings,
    reader_snapshot_root,
    wall_clock,
)
from bot.cli.console import BANNER, Console
from bot.cli.db_cmd import cmd_db
from bot.cli.drafts_cmd import cmd_draft_export, cmd_drafts, cmd_review
from bot.cli.errors import NotFound, UsageProblem, no_case
from bot.cli.examples_cmd import cmd_examples
from bot.cli.inputs import read_file, read_stream
from bot.cli.mcp_cmd import cmd_mcp
from bot.cli.nodes_cmd import cmd_nodes
from bot.cli.parser import Command
from bot.cli.parser import build_parser as parse_args_for
from bot.cli.read_cmd import cmd_cases_list, cmd_search
from bot.cli.stats_cmd import cmd_stats
from bot.cli.sync_cmd import cmd_sync
from bot.cli.topics_cmd import cmd_topics
from bot.library.case_store import CasesUnavailable, load_library, require_cases
from bot.library.review import review_library
from bot.library.topics import Vocabulary, alias_problems, near_duplicate_problems
from bot.matching.ranking import MatchConfig
from bot.model.case import Lang
from bot.model.excerpt import Excerpt
from bot.ops.settings import Settings, posting_only
from bot.replies.labels import label
from bot.storage import StorageError, StorageUnavailable


def _settings_from_args(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "cases", None):
        overrides["CASES_DIR"] = args.cases
    return load_settings(overrides)


# -- subcommands --------------------------------------------------------------------------------------


def _cmd_validate(args: argparse.Namespace) -> int:
    directory = Path(args.dir) if args.dir else _settings_from_args(args).cases_dir
    library = load_library(directory)
    if not directory.is_dir() or not any(directory.glob("*.json")):
        require_cases(library, directory)  # one line: the directory is missing, a file, or holds no case
    vocabulary = Vocabulary.of(library.summaries.values())
    problems = [*library.problems, *review_library(library), *alias_problems(), *near_duplicate_problems(vocabulary)]
    for problem in problems:
        print(problem)
    errors = sum(problem.severity == "error" for problem in problems)
    warnings = len(problems) - errors
    print(f"{len(library)} cases loaded from {directory}: {errors} errors, {warnings} warnings")
    require_cases(library, directory)
    return 1 if errors or (args.strict and warnings) else 0


def _cmd_show(args: argparse.Namespace) -> int:
    service = build_reader(_settings_from_args(args))
    choices: dict[str, tuple[Lang, ...]] = {"en": ("en",), "ko": ("ko",), "both": ("en", "ko")}
    if service.get_case(args.id) is None:
        raise no_case(args.id, [c.id for c in service.suggest_ids(args.id)])
    print(service.lookup(args.id, choices[args.lang]).plain)
    return 0


def _read_input(name: str, limit: int) -> Excerpt:
    """A log of any size: its head and tail within ``limit`` bytes (the middle is counted, not kept)."""
    return read_stream(sys.stdin.buffer, limit) if name == "-" else read_file(name, limit)


def _cmd_match(args: argparse.Namespace) -> int:
    settings = _settings_from_args(args)
    library = load_cases(settings.cases_dir, reader_snapshot_root(settings))
    from bot.storage.memory import MemoryStorage  # matching needs no state

    service = IncidentService(
        library,
        MemoryStorage(),
        now=wall_clock(settings),
        match_config=MatchConfig(max_bytes=settings.max_paste_bytes),
        deadline_s=settings.match_deadline_seconds,
    )
    status = 0
    for name in args.files:
        try:
            data = _read_input(name, settings.max_paste_bytes)
        except OSError as exc:
            print(f"incident-bot: cannot read {name}: {exc.strerror}", file=sys.stderr)
            status = 2
            continue
        if not data.skipped_bytes and not (data.head + data.tail).strip():
            shown = "standard input" if name == "-" else name
            print(f"incident-bot: {shown} is empty: give the log, the error or the stack trace", file=sys.stderr)
            status = 2
            continue
        started = time.perf_counter()
        result = service.match(data, slack_encoded=False)
        elapsed = (time.perf_counter() - started) * 1000
        if args.json:
            record = {"file": name, **match_record(result, service.library.cases), "elapsed_ms": round(elapsed, 2)}
            print(json.dumps(record, ensure_ascii=False))
        else:
            print(f"== {name} ({elapsed:.0f} ms, reply={'yes' if result.reply else 'no'})")
            print(service.render_match(result, ("en", "ko"), explicit=True).plain)
    return status


def _cmd_digest(args: argparse.Namespace) -> int:
    import asyncio

    from bot.digest.runner import DigestError, DigestParams, DigestRunner, digest_client

    with posting_only():  # the digest never serves HTTP: no signing secret needed
        settings = _settings_from_args(args)
    service = build_service(settings)
    if not args.post:
        return _print_plan(service, args.json)
    if not (settings.slack_bot_token and settings.digest_channel):
        if args.json:
            print(json.dumps({"status": "refused", "error": "--post needs SLACK_BOT_TOKEN and DIGEST_CHANNEL"}))
        print("incident-bot: --post needs SLACK_BOT_TOKEN and DIGEST_CHANNEL", file=sys.stderr)
        return 2
    runner = DigestRunner(
        service.storage,
        digest_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url),
        settings.digest_channel,
        DigestParams.from_settings(settings),
        cases=service.digest_candidates,
        nodes=service.digest_nodes,
        lookup=lambda case_id: service.library.cases.get(case_id),
        clock=service.now,
    )
    try:
        outcome = asyncio.run(runner.run_due(service.now()))
    except DigestError as exc:
        if args.json:
            print(json.dumps({"status": "failed", "error": str(exc)}))
        print(f"incident-bot: digest not posted: {exc}", file=sys.stderr)
        return 1
    if args.json:
        said = {"period": outcome.period_key, "status": outcome.status, "message_ts": list(outcome.message_ts)}
        print(json.dumps(said))
    else:
        print(f"digest {outcome.period_key}: {outcome.status} ({len(outcome.message_ts)} message(s) posted)")
    return 0


def _print_plan(service: IncidentService, as_json: bool) -> int:
    """The next digest, as the console shows it too (one function computes it: ``digest_plan``)."""
    plan = service.digest_plan()
    langs: tuple[Lang, ...] = ("en", "ko")
    post_empty = service.digest_post_empty
    if as_json:
        print(json.dumps(plan.as_json(langs, post_empty), ensure_ascii=False, indent=2))
        return 0
    period = f"{plan.period_start:%Y-%m-%d %H:%M} – {plan.period_end:%Y-%m-%d %H:%M %Z}"
    when = "due now: the next run posts it" if plan.due else f"posts at {plan.period_end:%Y-%m-%d %H:%M %Z}"
    print(f"Next digest, {period} ({when}): {len(plan.cases)} case(s).")
    messages = plan.messages(langs, post_empty)
    if not messages:
        print("Nothing to post: no case newly reviewed (DIGEST_POST_EMPTY is off).")
    if not plan.cases:
        print(label("digest.how_reviewed", "en"))
    for message in messages:
        print(message.text + "\n")
    return 0


def _cmd_console(args: argparse.Namespace) -> int:
    settings = _settings_from_args(args)
    service = build_service(settings)
    print(BANNER.format(count=len(service.library), cases=settings.cases_dir))
    for problem in service.library.errors:
        print(f"  ! {problem}")
    console = Console(service, interactive=sys.stdin.isatty(), paste_limit=4 * settings.max_paste_bytes)
    console.run(_typed(console) if console.interactive else sys.stdin)
    return 0


def _typed(console: Console) -> Iterator[str]:
    """Lines from a terminal, each after the console's prompt (readline editing when available)."""
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  # line editing and history for input()
    while True:
        try:
            yield input(console.prompt)
        except EOFError:
            print()
            return
        except KeyboardInterrupt:  # Ctrl-C: leave like Ctrl-D, without a traceback
            print()
            return


def _cmd_default(args: argparse.Namespace) -> int:
    """Bare ``incident-bot``: the Slack bot when configured, else the local console."""
    settings = _settings_from_args(args)
    if not settings.slack_enabled:
        print("No SLACK_BOT_TOKEN configured: starting the local console instead.")
        return _cmd_console(args)
    return _cmd_run(args)


def _cmd_run(args: argparse.Namespace) -> int:
    settings = _settings_from_args(args)
    if not settings.slack_enabled:
        # A service manager restarting a console that exits at once helps nobody: say what is missing.
        print(
            "incident-bot run: SLACK_BOT_TOKEN is not set (use `incident-bot console` to try it locally)",
            file=sys.stderr,
        )
        return 2
    from bot.slack.runtime import run_slack  # imports slack_bolt only when Slack is configured

    services = build_services(settings, migrate=False)
    try:
        services.incident.storage.migrate()
    except StorageUnavailable as exc:  # run retries it, serving /readyz 503 meanwhile
        print(f"incident-bot: storage not reachable yet, will retry: {exc}", file=sys.stderr)
    return run_slack(settings, services)


COMMANDS: dict[str, Command] = {
    "validate": _cmd_validate,
    "show": _cmd_show,
    "match": _cmd_match,
    "digest": _cmd_digest,
    "console": _cmd_console,
    "run": _cmd_run,
    "sync": cmd_sync,
    "stats": cmd_stats,
    "db": cmd_db,
    "examples": cmd_examples,
    "drafts": cmd_drafts,
    "draft_export": cmd_draft_export,
    "review": cmd_review,
    "topics": cmd_topics,
    "mcp": cmd_mcp,
    "nodes": cmd_nodes,
    "actions": cmd_actions,
    "search": cmd_search,
    "cases_list": cmd_cases_list,
}


def build_parser() -> argparse.ArgumentParser:
    return parse_args_for(COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        args.func = _cmd_default
    try:
        result: int = args.func(args)
        if not sys.stdout.closed:  # the MCP stdio transport closes it when the client hangs up
            sys.stdout.flush()  # a closed pipe shows here, not at exit
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, like other Unix tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except NotFound as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return 1
    except UsageProblem as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return 2
    except CasesUnavailable as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return 2
    except StorageError as exc:  # one line naming the setting; a misconfigured database is not a crash
        print(f"incident-bot: {exc}", file=sys.stderr)
        return 2
    except ValidationError as exc:
        # Never echo the inputs: they include tokens.
        problems = [
            ": ".join(bit for bit in (".".join(map(str, err["loc"])), err["msg"].removeprefix("Value error, ")) if bit)
            for err in exc.errors(include_input=False, include_url=False)
        ]
        print("incident-bot: invalid settings: " + "; ".join(problems), file=sys.stderr)
        return 2
    return result


if __name__ == "__main__":
    sys.exit(main())
