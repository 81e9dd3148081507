"""The library for agents, over the Model Context Protocol (the official SDK's ``FastMCP``).

Tools under the upstream incident library's names, over the local library: ``search_incidents``,
``get_incident``, ``list_incidents``, ``get_topic`` and ``vocab``; and what only incident-bot has:
``match_log`` (a raw log in, ranked cases with evidence, suspects and filled runbook commands out; the same
record as ``incident-bot match --json`` without timings) and ``similar_incidents``. Cases are resources
through one URI template: ``case://IL-0427`` (JSON) and ``case://IL-0427.md`` (Markdown).

Read-only: no tool writes to the library or to storage. Inputs are validated and capped like Slack pastes;
errors are tool errors with one clear line, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Literal

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ResourceError, ToolError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ContentBlock, ToolAnnotations
from pydantic import AnyUrl, ValidationError

from bot.app.records import case_summary_record, match_record, runbook_record
from bot.app.service import IncidentService
from bot.app.topics import allowed_by, is_count, newest_first
from bot.app.workers import Busy, WorkerPools
from bot.library.topics import KINDS, Topic
from bot.model.case import Case, Lang
from bot.ops.version import bot_version

MAX_QUERY = 500
MAX_ARGUMENT = 1000  # any argument but a log's text
_SDK_PREFIX = "Error creating resource from template: "
# Every tool only reads: clients may call them without asking the user first.
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
# A whole log may come over HTTP; the matcher reads at most MAX_PASTE_BYTES of it (head and tail). A body
# is that, JSON-escaped (up to six bytes per byte for control characters; twice covers real logs), plus
# the JSON-RPC envelope: 4 MiB and 64 KiB. A longer one is refused by the SDK with 413.
MAX_REQUEST_BYTES = (4 << 20) + (64 << 10)
MAX_LIMIT = 50
INSTRUCTIONS = (
    "A library of reviewed GPU-cluster incidents (GPU loss, ECC, NCCL, InfiniBand, storage, ...), in "
    "English and Korean. Paste a raw log into match_log to get the case that explains it, the matched line, "
    "the suspect node and the first commands to run; search_incidents and list_incidents find cases by "
    "words and topics (vocab lists them); get_incident reads one."
)


def case_markdown(case: Case, lang: Lang | Literal["both"] = "both") -> str:
    """A case as Markdown: titles, summary, runbook, lessons, sources."""
    langs: tuple[Lang, ...] = ("en", "ko") if lang == "both" else (lang,)
    out = [f"# {case.id}"]
    for one in langs:
        if case.title.get(one):
            out.append(f"**{case.title.get(one)}**")
    for one in langs:
        if case.summary.get(one):
            out += ["", case.summary.get(one) or ""]
    if case.runbook:
        out += ["", "## Runbook"]
        for step in runbook_record(case, {}):
            text = " / ".join(step["text"].get(one) or "" for one in langs if step["text"].get(one))
            out.append(f"- [{step['stage']}] {text}" + (f"\n  `{step['command']}`" if "command" in step else ""))
    for one in langs:
        if case.lessons.get(one):
            out += ["", "## Lessons" if one == "en" else "## 교훈", case.lessons.get(one) or ""]
    if case.sources:
        out += ["", "## Sources", *(f"- {source.url}" for source in case.sources)]
    return "\n".join(out) + "\n"


def _case_json(case: Case, lang: Lang | Literal["both"]) -> dict[str, Any]:
    data: dict[str, Any] = case.model_dump(mode="json", exclude={"review_notes", "signatures"})
    if lang != "both":
        for key, value in list(data.items()):
            if isinstance(value, dict) and set(value) <= {"en", "ko"} and value:
                data[key] = value.get(lang)
    return data


def _topic(topic: Topic) -> dict[str, Any]:
    return {"kind": topic.kind, "name": topic.name, "aliases": list(topic.aliases), "count": len(topic.cases)}


def _limit(value: int) -> int:
    if not 1 <= value <= MAX_LIMIT:
        raise ToolError(f"limit must be between 1 and {MAX_LIMIT}")
    return value


def _query(value: str) -> str:
    if len(value) > MAX_QUERY:
        raise ToolError(f"query is longer than {MAX_QUERY} characters")
    return value


def _whole_text(value: Any) -> Any:
    """``value`` with lone surrogates in its strings (and in the lists and dicts it holds) replaced."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, list):
        return [_whole_text(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole_text(item) for key, item in value.items()}
    return value


class _Server(FastMCP):
    """``FastMCP`` whose one case template answers ``.md`` URIs as Markdown (a template has one MIME type)."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Sequence[ContentBlock] | dict[str, Any]:
        """Arguments of the wrong type are one clear line naming the argument (not pydantic's report);
        so are overlong ones (the SDK would read a 5,000-digit string as a number and fail)."""
        for key, value in (arguments or {}).items():
            if key != "text" and isinstance(value, str) and len(value) > MAX_ARGUMENT:
                raise ToolError(f"{name}: {key} is longer than {MAX_ARGUMENT} characters")
        # A lone surrogate (valid JSON, "\ud800") is not text: it becomes U+FFFD, never an encoder's error.
        arguments = {key: _whole_text(value) for key, value in (arguments or {}).items()}
        try:
            return await super().call_tool(name, arguments)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            said = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                for error in exc.__cause__.errors(include_url=False)[:3]
            )
            raise ToolError(f"{name}: {said}") from None

    async def read_resource(self, uri: AnyUrl | str) -> Iterable[ReadResourceContents]:
        try:
            contents = await super().read_resource(uri)
        except (ResourceError, ValueError) as exc:  # the SDK wraps our one line in its prefix, twice
            said = str(exc)
            while said.startswith(_SDK_PREFIX):
                said = said.removeprefix(_SDK_PREFIX)
            raise ResourceError(said) from None
        if not str(uri).endswith(".md"):
            return contents
        return [replace(content, mime_type="text/markdown") for content in contents]


def build_server(
    service: IncidentService,
    transport_security: TransportSecuritySettings | None = None,
    pools: WorkerPools | None = None,
) -> FastMCP:
    """The server over ``service`` (tools and the case resource template). Stateless over HTTP: every tool
    only reads, so no session is kept for a client (thousands of ``initialize`` calls hold nothing).
    ``match_log`` runs on ``pools`` (the bot's ``MATCH_WORKERS`` / ``MATCH_QUEUE``), never on the event loop
    that serves every other client; past the queue it answers "busy" at once."""
    server = _Server(
        "incident-bot",
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        transport_security=transport_security,
        max_request_body_size=MAX_REQUEST_BYTES,
        stateless_http=True,
    )
    workers = pools or WorkerPools()
    server._mcp_server.version = bot_version()  # the initialize result names incident-bot's version, not the SDK's

    def case_of(raw: str) -> Case:
        case = service.get_case(raw[:40]) if raw.strip() else None
        if case is None:
            closest = ", ".join(c.id for c in service.suggest_ids(raw[:40])) or "-"
            raise ToolError(f"no case {raw[:40]!r} in the library (closest ids: {closest})")
        return case

    def filtered(filters: dict[str, str] | None) -> set[str] | None:
        words = []
        for kind, value in (filters or {}).items():
            if kind not in (*KINDS, "topic") or not isinstance(value, str) or not value.strip():
                raise ToolError(f"filter keys are {', '.join((*KINDS, 'topic'))}, each with a topic name")
            words.append(f"{kind}:{value.strip()[:80]}")
        allowed, unknown = allowed_by(service.vocabulary(), words)
        if unknown:
            closest = ", ".join(t.key for t in service.vocabulary().closest(unknown[0])) or "-"
            raise ToolError(f"no topic {unknown[0]!r} (closest: {closest}); vocab() lists them")
        return allowed

    @server.tool(annotations=READ_ONLY)
    def search_incidents(query: str, filters: dict[str, str] | None = None, limit: int = 8) -> list[dict[str, Any]]:
        """Cases ranked by where the words appear (id, failure class, components, title, body), optionally
        only those under topic filters such as {"component": "nccl"} (keys: class, component, cause,
        symptom, topic)."""
        allowed = filtered(filters)
        ranked = service.search_cases(_query(query), limit=200 if allowed is not None else _limit(limit))
        return [case_summary_record(c) for c in ranked if allowed is None or c.id in allowed][: _limit(limit)]

    @server.tool(annotations=READ_ONLY)
    def get_incident(id: str, lang: Literal["en", "ko", "both"] = "both") -> dict[str, Any]:
        """One case in full (title, summary, runbook, remediation, lessons, sources), in one language or both."""
        return _case_json(case_of(id), lang)

    @server.tool(annotations=READ_ONLY)
    def list_incidents(
        filters: dict[str, str] | None = None, limit: int = 20, cursor: str | None = None
    ) -> dict[str, Any]:
        """Cases under topic filters (none: every case), most recently reviewed first; pass back
        ``next_cursor`` for the next page."""
        allowed = filtered(filters)
        ids = list(service.library.cases) if allowed is None else sorted(allowed)
        ordered = newest_first(ids, service.library.summaries, service.reviewed_times())
        if cursor and not is_count(cursor):
            raise ToolError("cursor is the next_cursor a previous call returned")
        start = int(cursor) if cursor else 0
        page = ordered[start : start + _limit(limit)]
        following = start + len(page)
        return {
            "items": [case_summary_record(service.library.cases[cid]) for cid in page],
            "total": len(ordered),
            "next_cursor": str(following) if following < len(ordered) else None,
        }

    @server.tool(annotations=READ_ONLY)
    def get_topic(name: str) -> dict[str, Any]:
        """A topic (``nccl``, ``component:gpu-memory``, ``symptom:job-hang``) with its aliases and cases."""
        found = service.vocabulary().resolve(_query(name))
        if not found:
            closest = ", ".join(t.key for t in service.vocabulary().closest(name)) or "-"
            raise ToolError(f"no topic {name[:80]!r} (closest: {closest}); vocab() lists them")
        return {
            "name": name,
            "topics": [_topic(t) for t in found],
            "cases": [case_summary_record(service.library.cases[cid]) for cid in service.vocabulary().cases_of(found)],
        }

    @server.tool(annotations=READ_ONLY)
    def vocab() -> dict[str, Any]:
        """The library's vocabulary: failure classes, components, root causes and symptoms with counts and
        aliases (the names get_topic and the filters take)."""
        vocabulary = service.vocabulary()
        return {kind: [_topic(t) for t in vocabulary.by_kind(kind)] for kind in KINDS}

    @server.tool(annotations=READ_ONLY)
    async def match_log(text: str) -> dict[str, Any]:
        """Which case explains this log: ranked cases with tiers and the matched lines (in words), the suspect
        node, rank and GPU, and the best case's runbook with its commands filled. A log larger than the
        paste limit is read by its head and tail, and the result says so (truncated, skipped_bytes)."""
        if not text.strip():
            raise ToolError("text is empty: paste the log, the error or the stack trace")
        try:
            result = await workers.match(service.match, text, slack_encoded=False)
        except Busy:
            raise ToolError("every matching worker is busy (MATCH_WORKERS, MATCH_QUEUE): try again shortly") from None
        return match_record(result, service.library.cases)

    @server.tool(annotations=READ_ONLY)
    def similar_incidents(id: str, limit: int = 5) -> list[dict[str, Any]]:
        """Cases that share failure class, components, root cause or symptoms with a case."""
        return [case_summary_record(c) for c in service.similar_cases(case_of(id), limit=_limit(limit))]

    @server.resource("case://{name}", mime_type="application/json")
    def case_resource(name: str) -> str:
        """A case: ``case://IL-0427`` as JSON, ``case://IL-0427.md`` as Markdown."""
        markdown = name.endswith(".md")
        raw = name.removesuffix(".md")
        case = service.get_case(raw[:40])
        if case is None:
            raise ResourceError(f"no case {raw[:40]!r} in the library")
        if markdown:
            return case_markdown(case)
        return json.dumps(_case_json(case, "both"), ensure_ascii=False)

    return server
