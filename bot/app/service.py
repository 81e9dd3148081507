"""The use cases every transport calls (look up, list, search, similar, match, preferences, replies); Slack
handlers and the console hold no logic of their own. The library, matcher and search index live in one
immutable snapshot that ``reload`` swaps whole, so a request in flight sees one consistent library."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from rapidfuzz import fuzz, process

from bot.app.digests import DigestDesk, DigestTiming
from bot.app.drafts import Drafts, WithReview
from bot.app.drains import Drains
from bot.app.examples import ExampleBook
from bot.app.forget import forget_reply
from bot.app.indexes import build_matcher, build_search
from bot.app.learning import Refresher
from bot.app.nodes import Answered, NodeMemory, Where
from bot.app.nodestates import NodeStates
from bot.app.prefs import auto_reply, lang_reply, langs_for
from bot.app.routing import route_command
from bot.app.search import CaseSearch, search_cases
from bot.app.topics import SearchFound, TopicPage, search_found, search_reply, topic_page, topic_reply, topics_reply
from bot.digest.plan import DigestPlan
from bot.library.case_store import CaseLibrary
from bot.library.topics import Vocabulary
from bot.matching.matcher import Matcher
from bot.matching.ranking import MatchConfig
from bot.model.case import Case, Lang
from bot.model.excerpt import Excerpt
from bot.model.ids import canonical_id
from bot.model.results import MatchResult, Reply, ReviewRecord
from bot.model.summary import CaseSummary
from bot.ops.clock import Clock
from bot.ops.metrics import Metrics
from bot.replies.messages import HELP, message
from bot.replies.more import unknown_id_reply
from bot.replies.nodes import nodes_reply
from bot.replies.render import (
    bilingual_reply,
    both,
    case_list_reply,
    case_reply,
    match_reply,
    message_reply,
    say,
)
from bot.storage.base import ReplyRecord, Storage, StorageError

log = logging.getLogger("incident_bot.service")

HELP_TEXT = HELP["en"]  # the console prints it; Slack gets both languages


@dataclass(frozen=True)
class _Snapshot:
    library: CaseLibrary
    matcher: Matcher
    search: CaseSearch


def _snapshot(library: CaseLibrary, config: MatchConfig) -> _Snapshot:
    state = _Snapshot(library=library, matcher=build_matcher(library, config), search=build_search(library))
    library.release_cases()  # the indexes are built: whole cases are read again only when shown
    return state


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    left, right = set(a), set(b)
    return len(left & right) / len(left | right) if left and right else 0.0


class IncidentService:
    node_states: NodeStates | None = None  # the scheduler's view of named nodes (bot.cli.compose)
    drains: Drains | None = None  # drain and resume from a reply (bot.app.drains), with a scheduler

    def __init__(
        self,
        library: CaseLibrary,
        storage: Storage,
        *,
        now: Clock,
        match_config: MatchConfig | None = None,
        deadline_s: float = 2.0,
        noise_window: timedelta = timedelta(minutes=60),
        monotonic: Callable[[], float] = time.monotonic,
        digest_cron: str = "0 9 * * mon",
        digest_timezone: str = "Asia/Seoul",
        digest_lookback_days: int = 30,
        digest_post_empty: bool = False,
        remote_similar: Callable[[str], list[tuple[str, str]]] | None = None,
        metrics: Metrics | None = None,
        reviewers: frozenset[str] = frozenset(),
        example_retention: timedelta = timedelta(days=90),
        case_id_prefix: str = "LOC",
        node_window: timedelta = timedelta(days=14),
        node_retention: timedelta = timedelta(days=90),
        node_aliases: Mapping[str, str] | None = None,
    ) -> None:
        self._config = match_config or MatchConfig()
        self._state = _snapshot(library, self._config)
        self._swap = threading.Lock()
        self.examples = ExampleBook(
            storage, example_retention, reviewers, lambda: self.now(), lambda: self.library.cases, lambda: self.matcher
        )
        self._examples_seen: tuple[int, int, int] | None = None
        self.learner = Refresher(self.refresh_examples)
        self.drafts = Drafts(storage, case_id_prefix)
        self.nodes = NodeMemory(storage, node_window, node_retention, node_aliases or {}, lambda: self.now())
        self._vocabulary: tuple[CaseLibrary, Vocabulary] | None = None
        self.storage = storage
        self.deadline_s = deadline_s
        self.noise_window = noise_window
        self.now = now
        self._monotonic = monotonic
        schedule = DigestTiming(digest_cron, digest_timezone, digest_lookback_days, digest_post_empty)
        self.digest = DigestDesk(storage, self.nodes, lambda: self.library, self.latest_reviews, now, schedule)
        # The incident library's own /similar answer as (id, title) pairs; raises when unreachable.
        self._remote_similar = remote_similar
        self.metrics = metrics or Metrics()

    # -- library ------------------------------------------------------------------------------------

    @property
    def library(self) -> CaseLibrary:
        return self._state.library

    @property
    def matcher(self) -> Matcher:
        return self._state.matcher

    def reload(self, library: CaseLibrary) -> None:
        """Swap in a new library (built off to the side; requests in flight keep the old one), with the
        confirmed examples as they were."""
        state = _snapshot(library, self._config)
        with self._swap:
            previous = self._state.matcher
            self._state = replace(state, matcher=state.matcher.with_examples(previous.examples))
            self._examples_seen = None  # the next refresh reads every example again (a case may come back)

    def refresh_examples(self, *, force: bool = False) -> bool:
        """Rebuild the confirmed-example index when stored examples changed; True when rebuilt (errors logged)."""
        try:
            self.examples.purge_if_due(self.nodes)  # retention holds when nothing is written, too
            version = self.examples.version()
            if version == self._examples_seen and not force:
                return False
            lines = self.examples.known_lines(self.library.cases)
        except StorageError as exc:
            log.warning("confirmed examples not read: %s", exc)
            return False
        with self._swap:
            self._state = replace(self._state, matcher=self._state.matcher.with_examples(lines))
            self._examples_seen = version
        self.metrics.example_lines.set(len(lines))
        return True

    def examples_changed(self) -> None:
        """Stored examples changed (a vote, a deletion): bring the index up to date in the background."""
        self.learner.request()

    def get_case(self, raw_id: str) -> Case | None:
        return self._state.library.get(raw_id)

    def suggest_ids(self, raw: str, limit: int = 3) -> list[Case]:
        """The ids close to ``raw``: the same number under another prefix, then those one typo away (an edit
        similarity of at least 80: IL-0428 for IL-0427, never IL-0239 for IL-0409). Often none."""
        cases = self._state.library.cases
        wanted = canonical_id(raw)
        number = wanted.split("-")[1] if wanted else None
        same_number = [c for cid, c in cases.items() if number and cid.endswith("-" + number)]
        query = wanted or raw.strip().upper()
        fuzzy = process.extract(query, list(cases), scorer=fuzz.ratio, limit=limit, score_cutoff=80)
        picked = same_number + [cases[cid] for cid, _, _ in fuzzy]
        unique = list(dict.fromkeys(c.id for c in picked))[:limit]
        return [cases[cid] for cid in unique]

    def recent_cases(self, limit: int = 10) -> list[Case]:
        """Newest first by review date (the file's or a stored review's, the later), then case date."""
        library = self._state.library
        stored = {cid: r.reviewed_at.date().isoformat() for cid, r in self.latest_reviews().items()}

        def key(summary: CaseSummary) -> tuple[str, str]:
            return (max(summary.reviewed or "", stored.get(summary.id, "")), summary.date or "")

        newest = sorted(library.summaries.values(), key=key, reverse=True)[:limit]
        return [library.cases[summary.id] for summary in newest]

    def search_cases(self, words: str, limit: int = 8) -> list[Case]:
        """Cases ranked by where the words appear: id, failure class, components, title, then body."""
        return search_cases(self._state.search, self._state.library.cases, words, limit)

    def similar_cases(self, case: Case, limit: int = 5) -> list[Case]:
        """Cases sharing failure class, components, root cause, symptoms or an explicit relation."""
        scored: list[tuple[float, str]] = []
        related = {str(r) for r in case.related}
        library = self._state.library
        for other in library.summaries.values():
            if other.id == case.id:
                continue
            score = 3.0 * _jaccard(case.components, other.components)
            score += 2.0 * _jaccard(case.symptoms, other.symptoms)
            score += 2.5 if case.failure_class and case.failure_class == other.failure_class else 0.0
            score += 1.0 if case.root_cause and case.root_cause == other.root_cause else 0.0
            score += 2.0 if other.id in related or case.id in other.related else 0.0
            if score > 0:
                scored.append((score, other.id))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [library.cases[cid] for _, cid in scored[:limit]]

    # -- matching -----------------------------------------------------------------------------------

    def match(self, paste: str | bytes | Excerpt, *, slack_encoded: bool = True) -> MatchResult:
        """Run the matcher under the per-request deadline. CPU-bound: async callers use an executor."""
        started = self._monotonic()
        result = self._state.matcher.match(
            paste, clock=self._monotonic, deadline_s=self.deadline_s, slack_encoded=slack_encoded
        )
        self.metrics.match_latency.observe(max(0.0, self._monotonic() - started))
        self.metrics.matches.labels(tier=result.best.tier.value if result.best else "none").inc()
        return result

    def render_match(
        self,
        result: MatchResult,
        langs: Sequence[Lang],
        *,
        explicit: bool,
        where: Where | None = None,
        answered: Answered | None = None,
    ) -> Reply:
        """The reply for a match, with the suspects line (and a host's earlier failures) and the runbook's
        commands filled from them. With ``where`` (a first answer, not a re-render) the hosts it names are
        remembered. With ``answered`` (a reply drawn again from its button value) the earlier failures are
        those that answer saw."""
        suspects = result.suspects
        history = self.nodes.history(result, answered, where) if result.best is not None else {}
        reply = match_reply(
            result,
            self._state.library.cases,
            langs,
            explicit=explicit,
            suspects=suspects.summary if suspects else None,
            fills=suspects.fills if suspects else None,
            history=history,
        )
        if where is not None and reply.tier is not None:
            self.nodes.remember(result, where)
        return reply

    def should_auto_reply(self, channel: str, result: MatchResult, where: Where | None = None) -> bool:
        """An unprompted paste gets an answer only when the matcher says so, the channel has automatic
        replies on, and the same case was not posted in this channel within the noise window, unless a
        host it names failed before (the next job landed on the bad node: that is news). A paste kept
        quiet by the window still has its hosts remembered (with ``where``)."""
        best = result.best
        if not result.reply or best is None:
            return False
        if not self.storage.get_channel_auto(channel):
            return False
        last = self.storage.last_reply_for_case(channel, best.case_id)
        if last is None or self.now() - last >= self.noise_window:
            return True
        if where is None:
            return False
        failed = result.suspects is not None and result.suspects.failed
        if failed and any(self.nodes.history(result, where=where).values()):
            return True
        self.nodes.remember(result, where)
        return False

    def record_reply(self, channel: str, message_ts: str, thread_ts: str, reply: Reply, source: str) -> int | None:
        if not reply.case_ids:
            return None
        self.metrics.replies.labels(source=source).inc()
        record = ReplyRecord(
            channel=channel,
            message_ts=message_ts,
            thread_ts=thread_ts,
            case_ids=tuple(reply.case_ids),
            tier=reply.tier or "none",
            created_at=self.now(),
            source=source,
        )
        return self.storage.log_reply(record)

    # -- commands -----------------------------------------------------------------------------------

    def langs_for_user(self, user_id: str | None, locale: str | None = None) -> tuple[Lang, ...]:
        try:
            pref = self.storage.get_user_lang(user_id) if user_id else None
        except StorageError:  # storage down: the locale decides (the answer then says the database is down)
            pref = None
        return langs_for(pref, locale)

    def command(
        self,
        text: str,
        *,
        user_id: str | None = None,
        channel_id: str | None = None,
        langs: Sequence[Lang] = ("en", "ko"),
        reviewer: bool = False,
    ) -> Reply:
        """Answer ``/incident <text>``: one entry point for Slack and the console. Never raises for input.
        ``reviewer``: the user may record reviews (``REVIEWERS``; the Slack handler resolves groups)."""
        body = text.strip()
        verb, rest = route_command(body)
        self.metrics.commands.labels(verb=verb).inc()
        if verb == "list":
            return case_list_reply(
                self.recent_cases(), both("recent", langs), langs, message("library.empty", langs[0])
            )
        if verb == "help":
            return bilingual_reply(HELP, langs)
        if verb == "search":
            return self._search_reply(rest, langs)
        if verb == "similar":
            return self._similar_reply(rest.strip(), langs)
        if verb == "lang":
            return lang_reply(self.storage, user_id, rest.strip().lower(), langs)
        if verb == "auto":
            return auto_reply(self.storage, channel_id, rest.strip().lower(), langs, user_id)
        if verb == "digest":
            return self.digest_preview(langs)
        if verb == "nodes":
            repeated = self.nodes.repeated()
            now = self.node_states.lookup([host for host, _ in repeated]) if self.node_states else None
            taken = self.storage.list_actions(self.now() - self.nodes.window)
            return nodes_reply(repeated, self.nodes.window.days, langs, channel_id, now, taken)
        if verb == "topics":
            return topics_reply(self.vocabulary(), langs, rest)
        if verb == "topic":
            state = self._state.library
            return topic_reply(self.vocabulary(), rest, state.summaries, state.cases, self.reviewed_times(), langs)
        if verb == "review":
            if not reviewer or not user_id:
                return say("review.not_allowed", langs)
            raw, _, note = rest.strip().partition(" ")
            return self.review(raw, user_id, note, langs)
        if verb == "forget":
            return forget_reply(self.examples, rest, reviewer and bool(user_id), langs, self.examples_changed)
        if verb == "id":
            return self.lookup(body, langs)
        return self.render_match(self.match(body), langs, explicit=True)

    def lookup(self, raw_id: str, langs: Sequence[Lang]) -> Reply:
        case = self.get_case(raw_id)
        if case is None:
            return unknown_id_reply(raw_id.strip(), self.suggest_ids(raw_id), langs)
        return case_reply(case, langs, reviewed=self.latest_reviews().get(case.id))

    def latest_reviews(self) -> dict[str, ReviewRecord]:
        """The newest stored review per case ({} when storage cannot answer: the case files still do)."""
        try:
            return self.drafts.latest_reviews()
        except StorageError as exc:
            log.warning("reviews not read: %s", exc)
            return {}

    def review(self, raw_id: str, reviewer: str, note: str, langs: Sequence[Lang]) -> Reply:
        """Record a review of a case (``/incident review``, ``incident-bot cases review``): refused with
        the reason when the case is unknown or fails validation."""
        case = self.get_case(raw_id) if raw_id else None
        if case is None:
            if not raw_id:
                return say("review.usage", langs)
            return unknown_id_reply(raw_id, self.suggest_ids(raw_id), langs)
        if not reviewer.strip():
            return say("review.no_reviewer", langs)
        path = self.library.paths.get(case.id)
        record, problems = self.drafts.review(case, Path(path) if path else None, reviewer, note, self.now())
        if record is None:
            return say("review.refused", langs, id=case.id, reason=str(problems[0])[:300])
        key = "review.saved.digested" if case.id in self.storage.digested_case_ids() else "review.saved"
        return say(key, langs, id=case.id, who=record.reviewer, when=f"{record.reviewed_at:%Y-%m-%d}")

    def vocabulary(self) -> Vocabulary:
        """The library's topics (built once per library version)."""
        library = self._state.library
        cached = self._vocabulary
        if cached is None or cached[0] is not library:
            cached = (library, Vocabulary.of(library.summaries.values()))
            self._vocabulary = cached
        return cached[1]

    def reviewed_times(self) -> dict[str, datetime]:
        """When each case was last reviewed, by the stored reviews (the file's own date is on the summary)."""
        return {case_id: r.reviewed_at for case_id, r in self.latest_reviews().items()}

    def topic_cases(self, words: str, page: int = 1) -> TopicPage | None:
        return topic_page(self.vocabulary(), words, self._state.library.summaries, self.reviewed_times(), page)

    def search(self, words: str) -> SearchFound:
        """What ``/incident search WORDS`` shows, as cases (``incident-bot search``)."""
        library = self._state.library
        return search_found(
            self.vocabulary(), words, self.search_cases, library.summaries, library.cases, self.reviewed_times()
        )

    def _search_reply(self, words: str, langs: Sequence[Lang]) -> Reply:
        return search_reply(words, self.search(words) if words.strip() else None, langs)

    def _similar_reply(self, raw_id: str, langs: Sequence[Lang]) -> Reply:
        case = self.get_case(raw_id) if raw_id else None
        if case is None:
            if not raw_id:
                return say("similar.usage", langs)
            return unknown_id_reply(raw_id, self.suggest_ids(raw_id), langs)
        heading = message("similar.heading", langs[0], id=case.id)
        local = case_list_reply(self.similar_cases(case), heading, langs, message("similar.none", langs[0]))
        if self._remote_similar is None:
            return local
        try:
            remote = self._remote_similar(case.id)
        except Exception as exc:  # any failure of the remote source falls back to local similarity
            note = message("similar.remote_failed", langs[0], error=type(exc).__name__)
            return local.model_copy(
                update={"plain": local.plain + "\n\n" + note, "blocks": [*local.blocks, message_reply(note).blocks[0]]}
            )
        lines = [f"{cid} — {title}" if title else cid for cid, title in remote[:8]]
        found = "\n".join(lines) or message("nothing", langs[0])
        extra = message_reply(message("similar.remote", langs[0]) + "\n" + found)
        return local.model_copy(
            update={"plain": local.plain + "\n\n" + extra.plain, "blocks": [*local.blocks, *extra.blocks]}
        )

    @property
    def digest_post_empty(self) -> bool:
        return self.digest.schedule.post_empty

    # -- digest (bot.app.digests) ---------------------------------------------------------------------

    def digest_candidates(self) -> list[WithReview]:
        return self.digest.candidates()

    def digest_nodes(self, start: datetime, end: datetime) -> list[tuple[str, str]]:
        return self.digest.nodes_part(start, end)

    def digest_plan(self) -> DigestPlan:
        return self.digest.plan()

    def digest_preview(self, langs: Sequence[Lang]) -> Reply:
        return self.digest.preview(langs)
