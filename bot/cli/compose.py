"""The composition root: settings, the case library, storage and the services are put together here,
and only here."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.app.service import IncidentService
from bot.app.services import Services
from bot.app.workers import WorkerPools
from bot.library.case_store import CaseLibrary, load_library
from bot.matching.matcher import MatchConfig
from bot.ops.settings import Settings
from bot.storage import Storage, open_storage

log = logging.getLogger("incident_bot")


def load_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """Settings from the environment and ``.env``, with command-line overrides on top."""
    return Settings(**(overrides or {}))


def load_cases(directory: Path) -> CaseLibrary:
    library = load_library(directory)
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


def build_service(settings: Settings, storage: Storage | None = None) -> IncidentService:
    """The one place where the library, storage and service are put together."""
    library = load_cases(settings.cases_dir)
    store = storage or open_storage(settings.effective_database_url)
    store.migrate()
    service = IncidentService(
        library,
        store,
        match_config=MatchConfig(max_bytes=settings.max_paste_bytes),
        deadline_s=settings.match_deadline_seconds,
        noise_window=timedelta(minutes=settings.noise_window_minutes),
        digest_cron=settings.digest_cron,
        digest_timezone=settings.digest_timezone,
        digest_lookback_days=settings.digest_lookback_days,
        remote_similar=_remote_similar(settings.library_api_url) if settings.library_api_url else None,
    )
    service.metrics.broken_case_files.set(len(library.broken_paths))
    return service


def build_services(settings: Settings, storage: Storage | None = None) -> Services:
    """The service, its feedback side and the worker pools a long-running transport needs."""
    pools = WorkerPools(match_workers=settings.match_workers, match_queue=settings.match_queue)
    return Services.around(build_service(settings, storage), pools)
