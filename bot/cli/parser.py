"""The command line's arguments and help: written for the person typing, with an example per command."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from bot.ops.version import bot_version

Command = Callable[[argparse.Namespace], int]

DESCRIPTION = """\
incident-bot answers pasted GPU-cluster errors with the reviewed incident that explains them.
Without a subcommand it runs the Slack bot when SLACK_BOT_TOKEN is set, else the local console.

examples:
  incident-bot                          the console on the bundled cases (no Slack needed)
  incident-bot show IL-0427             one case, English and Korean
  incident-bot match train.log          which case explains this log
  dmesg | incident-bot match -          the same, from standard input
  incident-bot cases validate cases/    check case files before committing them
"""

_CASES_HELP = "case directory (default: the CASES_DIR setting, else the bundled cases/)"


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def _add_cases_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand's own default must not overwrite a --cases given before the subcommand.
    parser.add_argument("--cases", metavar="DIR", default=argparse.SUPPRESS, help=_CASES_HELP)


def _sub(sub: Any, name: str, func: Command, summary: str, examples: str, description: str = "") -> Any:
    """A command that runs ``func``."""
    parser = _group(sub, name, summary, examples, description)
    parser.set_defaults(func=func)
    return parser


def _whole(raw: str, low: int, high: int, what: str) -> int:
    """``raw`` as a whole number from ``low`` to ``high``; argparse turns the error into one usage line."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, not {raw[:40]!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be from {low} to {high}, not {value}")
    return value


def _positive(raw: str) -> int:
    """A number of days, 1 to 3650."""
    return _whole(raw, 1, 3650, "a whole number of days")


def _count(raw: str) -> int:
    """How many to list, 1 to 1000."""
    return _whole(raw, 1, 1000, "a whole number")


def _group(sub: Any, name: str, summary: str, examples: str, description: str = "") -> Any:
    """A command (with subcommands of its own, like ``cases`` and ``db``, or run by :func:`_sub`): its help
    with examples, and ``--cases`` taken here too."""
    parser = sub.add_parser(
        name,
        help=summary,
        description=(description or summary[0].upper() + summary[1:] + ".") + "\n\nexamples:\n" + examples,
        formatter_class=_formatter,
    )
    _add_cases_option(parser)
    return parser


def build_parser(commands: dict[str, Command]) -> argparse.ArgumentParser:
    """The parser; ``commands`` maps each subcommand name (and ``validate``) to what runs it."""
    parser = argparse.ArgumentParser(prog="incident-bot", description=DESCRIPTION, formatter_class=_formatter)
    _add_cases_option(parser)
    parser.add_argument("--version", action="version", version=f"%(prog)s {bot_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    cases = _group(
        sub,
        "cases",
        "check the case library",
        "  incident-bot cases validate --strict   every problem; warnings fail too\n"
        "  incident-bot cases drafts              drafts started in Slack\n"
        "  incident-bot cases list                the cases, newest reviewed first\n"
        "  incident-bot cases review IL-0427 --by NAME   mark a case reviewed\n",
    )
    cases_sub = cases.add_subparsers(dest="cases_command", required=True, metavar="COMMAND")
    validate = _sub(
        cases_sub,
        "validate",
        commands["validate"],
        "check every case file and print every problem",
        "  incident-bot cases validate            the case directory in use\n"
        "  incident-bot cases validate my-cases/  another directory\n",
        "Check every case file and print every problem, errors and warnings. Exit status 1 when a file\n"
        "has an error (it would not load), 2 when the directory is missing or holds no loadable case.",
    )
    validate.add_argument("dir", nargs="?", help="directory to check (default: the case directory in use)")
    validate.add_argument("--strict", action="store_true", help="warnings (a missing language...) fail too")
    validate.add_argument("-v", "--verbose", action="store_true", help=argparse.SUPPRESS)  # kept: now the default
    listed_cases = _sub(
        cases_sub,
        "list",
        commands["cases_list"],
        "list every case, newest reviewed first (what /incident lists in Slack, all of it)",
        "  incident-bot cases list\n  incident-bot cases list --json | jq -r '.[].id'\n",
    )
    listed_cases.add_argument("--json", action="store_true", help="print JSON")
    _sub(
        cases_sub,
        "drafts",
        commands["drafts"],
        "list the case drafts started in Slack or the console",
        "  incident-bot cases drafts\n",
    )
    draft = _group(
        cases_sub,
        "draft",
        "a case draft: export it as a case file",
        "  incident-bot cases draft export 3 --dir cases/\n",
    )
    draft_sub = draft.add_subparsers(dest="draft_command", required=True, metavar="COMMAND")
    export = _sub(
        draft_sub,
        "export",
        commands["draft_export"],
        "write a draft as a case file with the next free local id (CASE_ID_PREFIX, default LOC)",
        "  incident-bot cases draft export 12\n  incident-bot cases draft export D-12 --dir my-cases/\n",
    )
    export.add_argument("id", help="the draft's id (12 or D-12)")
    export.add_argument("--dir", help="where to write (default: the case directory in use)")
    review = _sub(
        cases_sub,
        "review",
        commands["review"],
        "record a review of a case (refused when the case fails validation); the digest carries it",
        "  incident-bot cases review LOC-0001 --by 'Jiwoo Park' --note 'checked against the thread'\n",
    )
    review.add_argument("id", help="the case id")
    review.add_argument("--by", required=True, metavar="NAME", help="the reviewer's name (required)")
    review.add_argument("--note", help="a short note")

    show = _sub(
        sub,
        "show",
        commands["show"],
        "print one case: summary, remediation and lessons",
        "  incident-bot show IL-0427\n  incident-bot show il-427 --lang ko\n",
    )
    show.add_argument("id", help="case id, e.g. IL-0427 (case and leading zeros do not matter)")
    show.add_argument("--lang", choices=["en", "ko", "both"], default="both", help="languages to print")

    search = _sub(
        sub,
        "search",
        commands["search"],
        "search the library by words and topic filters (the same results as /incident search)",
        "  incident-bot search nccl timeout\n  incident-bot search ecc component:gpu --json\n",
        "Search the library by words and topic filters (the same results as /incident search). Exit status\n"
        "1 when nothing matches, 2 for an unknown topic filter.",
    )
    search.add_argument("words", nargs="+", metavar="WORD", help="words, and filters such as component:nccl")
    search.add_argument("--json", action="store_true", help="print JSON")

    match = _sub(
        sub,
        "match",
        commands["match"],
        "find the case that explains a log",
        "  incident-bot match train.log\n  dmesg -T | incident-bot match -\n  incident-bot match --json *.log | jq .\n",
        "Find the case that explains each log file ('-' reads standard input). Logs of any size are\n"
        "read by their head and tail.",
    )
    match.add_argument("files", nargs="+", metavar="FILE", help="log files, '-' for standard input")
    match.add_argument("--json", action="store_true", help="one JSON object per input (JSON Lines)")

    digest = _sub(
        sub,
        "digest",
        commands["digest"],
        "preview the next weekly digest, or post the due one now",
        "  incident-bot digest                 what the next digest will post\n"
        "  incident-bot digest --json          the same as JSON (Block Kit included)\n"
        "  incident-bot digest --post          post the due digest now (exactly once)\n",
    )
    mode = digest.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print what would be posted (the default)")
    mode.add_argument("--post", action="store_true", help="post the due digest now (needs SLACK_BOT_TOKEN)")
    digest.add_argument("--json", action="store_true", help="print JSON, also when there is nothing to post")

    _sub(
        sub,
        "console",
        commands["console"],
        "the local console: commands and pasted logs, as in Slack",
        "  incident-bot console\n  printf '/incident IL-0427\\n' | incident-bot console\n",
    )
    _sub(
        sub,
        "run",
        commands["run"],
        "run the Slack bot (needs SLACK_BOT_TOKEN; exits with status 2 without it)",
        "  SLACK_BOT_TOKEN=xoxb-... SLACK_SIGNING_SECRET=... incident-bot run      HTTP mode\n"
        "  SLACK_BOT_TOKEN=xoxb-... SLACK_APP_TOKEN=xapp-... incident-bot run     Socket Mode\n",
    )
    sync = _sub(
        sub,
        "sync",
        commands["sync"],
        "fetch new and changed cases from the incident library's API into the case directory",
        "  incident-bot sync --api-url https://library.example.com\n  incident-bot sync --since 2026-11-01 --dry-run\n",
        "Fetch new and changed cases from the incident library's API into the case directory. Exit\n"
        "status 0 on success, 1 when a case was rejected or could not be fetched or the API failed, 2\n"
        "for a usage problem.",
    )
    sync.add_argument("--api-url", help="the library API's base URL (default: the LIBRARY_API_URL setting)")
    sync.add_argument("--since", help="only cases updated on or after this ISO date or datetime")
    sync.add_argument("--dry-run", action="store_true", help="report what would change; write nothing")
    sync.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    sync.add_argument("--retries", type=int, default=3, help="retries per request on 5xx and errors (default 3)")

    db = _group(
        sub,
        "db",
        "the database schema: upgrade it, or show its revision",
        "  incident-bot db current\n  incident-bot db upgrade\n",
    )
    db_sub = db.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    _sub(
        db_sub,
        "upgrade",
        commands["db"],
        "upgrade the database (DATABASE_URL, else the SQLite file in DATA_DIR) to the newest schema",
        "  incident-bot db upgrade\n  DATABASE_URL=postgresql://bot@db/incidents incident-bot db upgrade\n",
        "Upgrade the database (DATABASE_URL, else the SQLite file in DATA_DIR) to the newest schema, in one\n"
        "transaction under a lock (replicas starting together migrate once). A database made by incident-bot\n"
        "before schema migrations existed is adopted and converted in place. `run` does this at every start.",
    )
    _sub(
        db_sub,
        "current",
        commands["db"],
        "show the database's schema revision and the newest one",
        "  incident-bot db current\n",
    )

    stats = _sub(
        sub,
        "stats",
        commands["stats"],
        "helpful / not-helpful votes per case and the cases most often rejected",
        "  incident-bot stats\n  incident-bot stats --top 5 --json\n",
        "Votes from the Helpful and Not this case buttons, per case, and the cases most often rejected,\n"
        "from the bot's database (DATABASE_URL, else the SQLite file in DATA_DIR).",
    )
    stats.add_argument("--top", type=_count, default=10, help="how many most-rejected cases to list (default 10)")
    stats.add_argument("--json", action="store_true", help="print JSON instead of the table")

    mcp = _sub(
        sub,
        "mcp",
        commands["mcp"],
        "serve the library and the matcher to agents over MCP (stdio; Streamable HTTP with --http)",
        "  incident-bot mcp                       stdio, for an MCP client to launch\n"
        "  MCP_PORT=8765 incident-bot mcp --http  Streamable HTTP on 127.0.0.1:8765/mcp\n",
    )
    mcp.add_argument("--http", action="store_true", help="Streamable HTTP on MCP_HOST:MCP_PORT instead of stdio")

    nodes = _sub(
        sub,
        "nodes",
        commands["nodes"],
        "hosts that failed more than once (NODE_MEMORY_DAYS), newest first, with their cases and threads",
        "  incident-bot nodes\n  incident-bot nodes --days 7 --json\n",
    )
    nodes.add_argument("--days", type=_positive, help="look back this many days (default NODE_MEMORY_DAYS)")
    nodes.add_argument("--json", action="store_true", help="print JSON")

    actions = _sub(
        sub,
        "actions",
        commands["actions"],
        "drains and resumes taken from Slack, newest first: who, when, node, reason, command, the scheduler's answer",
        "  incident-bot actions\n  incident-bot actions --days 7 --json\n",
    )
    actions.add_argument("--days", type=_positive, help="look back this many days (default 90)")
    actions.add_argument("--json", action="store_true", help="print JSON")

    topics = _sub(
        sub,
        "topics",
        commands["topics"],
        "the library's topics: failure classes, components, root causes and symptoms, with counts and aliases",
        "  incident-bot topics\n  incident-bot topics --json\n",
    )
    topics.add_argument("--json", action="store_true", help="print JSON")

    examples = _group(
        sub,
        "examples",
        "confirmed examples: list them, export them for review, or delete one",
        "  incident-bot examples list --case IL-0427\n  incident-bot examples export --since 2026-11-01\n"
        "  incident-bot examples delete 42\n",
    )
    examples_sub = examples.add_subparsers(dest="examples_command", required=True, metavar="COMMAND")
    listed = _sub(
        examples_sub,
        "list",
        commands["examples"],
        "print the confirmed examples (redacted lines, who confirmed them, where, when)",
        "  incident-bot examples list\n  incident-bot examples list --case IL-0427 --since 2026-11-01 --json\n",
    )
    exported = _sub(
        examples_sub,
        "export",
        commands["examples"],
        "write them as paste files with manifest rows, for a person to review into tests/fixtures/",
        "  incident-bot examples export --dir review/\n",
    )
    deleted = _sub(
        examples_sub,
        "delete",
        commands["examples"],
        "delete an example (its line for its case, whoever confirmed it); every replica drops it on its next check",
        "  incident-bot examples delete 42\n",
    )
    deleted.add_argument("id", type=int, help="the example's id (examples list shows it)")
    for each in (listed, exported):
        each.add_argument("--case", help="only this case id")
        each.add_argument("--since", help="only examples confirmed on or after this ISO date")
    listed.add_argument("--json", action="store_true", help="print JSON")
    exported.add_argument("--dir", default="examples-export", help="where to write (default examples-export/)")
    return parser
