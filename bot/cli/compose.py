"""The composition root: settings, the case library, storage and the services are put together here,
and only here."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from bot.app.drains import DrainPolicy, Drains
from bot.app.nodes import parse_aliases as parse_node_aliases
from bot.app.nodestates import NodeStates
from bot.app.service import IncidentService
from bot.app.services import Services
from bot.app.workers import WorkerPools
from bot.library.case_store import CaseLibrary, load_library, require_cases
from bot.library.snapshot import load_with_snapshot
from bot.matching.ranking import MatchConfig
from bot.ops.clock import Clock, ticking_from
from bot.ops.metrics import Metrics
from bot.ops.settings import Settings
from bot.replies.seal import derive_key
from bot.scheduler.slurm_cli import SlurmCli
from bot.scheduler.slurm_control import SlurmControl
from bot.scheduler.slurm_rest import SlurmRest, TokenFile
from bot.storage import Storage, open_storage

log = logging.getLogger("incident_bot")


def load_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """Settings from the environment and ``.env``, with command-line overrides on top."""
    return Settings(**(overrides or {}))


def _utc_now() -> datetime:
    return datetime.now(UTC)


def wall_clock(settings: Settings) -> Clock:
    """The clock every service reads: the only reader of the wall clock in ``bot`` and ``handlers``.

    ``INCIDENT_BOT_TEST_NOW`` (tests only) starts it at that instant instead, ticking from there: a test
    that starts the bot as a subprocess runs its date logic at the instant the test chose."""
    if settings.test_now is not None:
        log.warning("INCIDENT_BOT_TEST_NOW is set: the clock starts at %s (tests only)", settings.test_now.isoformat())
        return ticking_from(settings.test_now)
    return _utc_now


def load_cases(directory: Path, snapshots: Path | None = None) -> CaseLibrary:
    """The case library in ``directory`` (through the start-up snapshot under ``snapshots`` when given);
    raises :class:`CasesUnavailable` when it holds no loadable case (a wrong directory must not look like
    "no case matches")."""
    loaded = load_with_snapshot(directory, snapshots) if snapshots is not None else load_library(directory)
    library = require_cases(loaded, directory)
    for problem in library.errors:
        log.warning("case library problem: %s", problem)
    return library


def _remote_similar(api_url: str) -> Any:
    """The library API's /similar as (id, title) pairs, with a short timeout and no retries."""
    from bot.library.client import LibraryClient

    def similar(case_id: str) -> list[tuple[str, str]]:
        with LibraryClient(api_url, timeout=2, retries=0) as client:
            refs = client.similar(case_id)
        pairs = []
        for ref in refs:
            title = ref.fields.get("title")
            text = title.get("en") or title.get("ko") or "" if isinstance(title, dict) else str(title or "")
            pairs.append((ref.id, str(text)))
        return pairs

    return similar


def build_service(
    settings: Settings,
    storage: Storage | None = None,
    *,
    migrate: bool = True,
    clock: Clock | None = None,
    snapshots: Path | None = None,
    examples_now: bool = True,
) -> IncidentService:
    """The one place where the library, storage and service are put together. ``migrate`` opens storage
    here (raising :class:`StorageError` with one line naming the setting); ``run`` opens it itself, with
    retries. ``clock`` defaults to :func:`wall_clock`; ``snapshots`` to :func:`snapshot_root`.
    ``examples_now``: build the confirmed-example index before returning (the CLI); a long-running bot
    builds it in the background instead and answers meanwhile."""
    library = load_cases(settings.cases_dir, snapshots or snapshot_root(settings))
    store = storage or open_storage(settings.effective_database_url)
    if migrate:
        store.migrate()
    service = IncidentService(
        library,
        store,
        now=clock or wall_clock(settings),
        match_config=MatchConfig(max_bytes=settings.max_paste_bytes),
        deadline_s=settings.match_deadline_seconds,
        noise_window=timedelta(minutes=settings.noise_window_minutes),
        digest_cron=settings.digest_cron,
        digest_timezone=settings.digest_timezone,
        digest_lookback_days=settings.digest_lookback_days,
        digest_post_empty=settings.digest_post_empty,
        remote_similar=_remote_similar(settings.library_api_url) if settings.library_api_url else None,
        reviewers=frozenset(user.strip() for user in settings.reviewers.split(",") if user.strip()),
        example_retention=timedelta(days=settings.example_retention_days),
        case_id_prefix=settings.case_id_prefix.upper(),
        node_window=timedelta(days=settings.node_memory_days),
        node_retention=timedelta(days=max(settings.node_retention_days, settings.node_memory_days)),
        node_aliases=parse_node_aliases(settings.node_aliases),
    )
    service.node_states = node_states(settings, service.metrics)
    if service.node_states is not None and settings.operators.strip():
        control = SlurmControl(bin_dir=settings.slurm_bin_dir, run_as=settings.slurm_run_as)
        policy = DrainPolicy(limit_per_hour=settings.drain_limit_per_hour, dry_run=settings.dry_run_actions)
        service.drains = Drains(store, service.node_states, control, policy, service.now)
    if migrate and examples_now:
        service.refresh_examples()
    service.metrics.broken_case_files.set(len(library.broken_paths))
    return service


def node_states(settings: Settings, metrics: Metrics) -> NodeStates | None:
    """The scheduler the replies read node state from: slurmrestd when ``SLURM_REST_URL`` is set, else the
    Slurm client commands with ``SLURM_CLI=true``, else none."""
    if settings.slurm_rest_url and settings.slurm_token_file is not None:
        token = TokenFile(str(settings.slurm_token_file))
        rest = SlurmRest(settings.slurm_rest_url, settings.slurm_rest_user, token)
        return NodeStates(rest, settings.scheduler_timeout_seconds, metrics)
    if settings.slurm_cli:
        return NodeStates(SlurmCli(bin_dir=settings.slurm_bin_dir), settings.scheduler_timeout_seconds, metrics)
    return None


def build_services(
    settings: Settings, storage: Storage | None = None, *, migrate: bool = True, clock: Clock | None = None
) -> Services:
    """The service, its feedback side and the worker pools a long-running transport needs."""
    pools = WorkerPools(match_workers=settings.match_workers, match_queue=settings.match_queue)
    service = build_service(settings, storage, migrate=migrate, clock=clock, examples_now=False)
    return Services.around(service, pools, button_key(settings))


def snapshot_root(settings: Settings) -> Path:
    """Where start-up snapshots of the case library are kept."""
    return Path(settings.data_dir) / "snapshots"


def reader_snapshot_root(settings: Settings) -> Path:
    """Snapshots for the commands that only read (match, show, search, cases list, topics, mcp): under
    DATA_DIR when it is set, else the user's cache directory, so they never create ./data where they run."""
    if "data_dir" in settings.model_fields_set:
        return snapshot_root(settings)
    return Path(user_cache_dir("incident-bot", appauthor=False)) / "snapshots"


def reader_storage(settings: Settings) -> Storage:
    """The bot's database for a command that only reads (stored reviews order the cases as in Slack): opened
    only when it exists (DATABASE_URL, or the SQLite file already there), never migrated; else in memory."""
    sqlite_file = Path(settings.data_dir) / "incident-bot.sqlite3"
    if settings.database_url or sqlite_file.is_file():
        return open_storage(settings.effective_database_url)
    from bot.storage.memory import MemoryStorage

    return MemoryStorage()


def build_reader(settings: Settings) -> IncidentService:
    """The service for a command that only reads: it writes nothing to the current directory."""
    return build_service(settings, reader_storage(settings), migrate=False, snapshots=reader_snapshot_root(settings))


def button_key(settings: Settings) -> bytes | None:
    """The key that binds button values to where they were shown, the same on every replica: derived from
    the signing secret (HTTP mode), else the app token (Socket Mode), else the bot token."""
    for secret in (settings.slack_signing_secret, settings.slack_app_token, settings.slack_bot_token):
        if secret is not None:
            return derive_key(secret.get_secret_value())
    return None
