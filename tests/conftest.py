"""Shared fixtures: a fresh storage per backend (SQLite file; PostgreSQL in its own schema when
``TEST_DATABASE_URL`` is set), the fake Slack Web API, and settings built from a dict."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from fake_slack import FakeSlack

from bot.library.case_store import CaseLibrary, load_library
from bot.model.case import Case
from bot.ops.clock import Clock, fixed
from bot.ops.settings import BUNDLED_CASES, Settings
from bot.storage import Storage, open_storage

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]

# The instant a test runs at when it does not choose one (a Thursday, away from the digest's Monday slot):
# no test reads the wall clock for what it expects. ``instants.py`` holds the instants the date-sensitive
# tests also run at.
NOW = datetime(2027, 1, 7, 3, 0, tzinfo=UTC)


def clock_at(moment: datetime = NOW) -> Clock:
    """A clock that always reads ``moment``."""
    return fixed(moment)


def run_cli_at(monkeypatch: pytest.MonkeyPatch, moment: datetime = NOW) -> datetime:
    """Make ``bot.cli.main.main`` (and any subprocess started with this environment) start its clock at
    ``moment`` (``INCIDENT_BOT_TEST_NOW``, read by the composition root for tests only)."""
    monkeypatch.setenv("INCIDENT_BOT_TEST_NOW", moment.isoformat())
    return moment


def postgres_schema_url(base_url: str, schema: str) -> str:
    """``base_url`` with ``search_path`` set to ``schema`` for every connection made from it."""
    sep = "&" if "?" in base_url else "?"
    return f"{base_url}{sep}options={quote(f'-csearch_path={schema}')}"


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL for a fresh PostgreSQL schema of ``TEST_DATABASE_URL``, dropped afterwards. Only tests marked
    ``postgres`` may call it: without ``TEST_DATABASE_URL`` they are deselected (``.ci/run`` always sets it)."""
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        pytest.fail("a test that needs PostgreSQL must be marked @pytest.mark.postgres")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')  # type: ignore[arg-type]
    try:
        yield postgres_schema_url(base, schema)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')  # type: ignore[arg-type]


@pytest.fixture(params=BACKENDS)
def storage_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """A URL for an empty, isolated database on each backend (not migrated)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'data' / 'bot.sqlite3'}"
        return
    with postgres_schema() as url:
        yield url


@pytest.fixture
def storage(storage_url: str) -> Iterator[Storage]:
    """A migrated storage on each backend."""
    store = open_storage(storage_url)
    store.migrate()
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack() as slack:
        yield slack


class _DictSettings(Settings):
    """Settings whose only source is the values passed in: no environment, no ``.env``."""

    @classmethod
    def settings_customise_sources(cls, settings_cls: Any, init_settings: Any, *_: Any, **__: Any) -> Any:
        return (init_settings,)


def make_settings(values: dict[str, Any] | None = None) -> Settings:
    """Settings from a dict keyed by environment names (``{"DIGEST_CHANNEL": "C1"}``)."""
    return _DictSettings(**(values or {}))


@pytest.fixture
def settings_factory() -> Any:
    return make_settings


def make_case(case_id: str, reviewed_at: str | None, **fields: Any) -> Case:
    """A small bilingual case; ``fields`` override any Case field (``title={"en": ..., "ko": None}``)."""
    data: dict[str, Any] = {
        "id": case_id,
        "org": "ExampleCo",
        "date": "2026-10-01",
        "url": f"https://incidents.example/cases/{case_id}",
        "title": {"en": f"Title of {case_id}", "ko": f"{case_id} 제목"},
        "lessons": {
            "en": "Check the ECC counters first. Then drain.",
            "ko": "먼저 ECC 카운터를 확인한다. 그다음 드레인.",
        },
        "root_cause": "hardware",
        "review": {"reviewed_at": reviewed_at} if reviewed_at else {},
    }
    data.update(fields)
    return Case.model_validate(data)


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    """The fake Web API with ``conversations.replies`` (``slack_harness.HarnessSlack``), for tests that
    run the Slack app. Imported here, not at the top: the harness itself imports this module."""
    from slack_harness import HarnessSlack

    with HarnessSlack() as slack:
        yield slack


@pytest.fixture(scope="session")
def library() -> CaseLibrary:
    """The bundled case library, loaded once."""
    return load_library(BUNDLED_CASES)


def copy_bundled_cases(tmp_path: Path, *ids: str) -> Path:
    """``tmp_path/cases`` holding copies of the named bundled case files (created if needed)."""
    cases = tmp_path / "cases"
    cases.mkdir(exist_ok=True)
    for case_id in ids:
        shutil.copy(BUNDLED_CASES / f"{case_id}.json", cases / f"{case_id}.json")
    return cases


_NOT_RUN = pytest.StashKey[int]()
_SLURM_NOT_RUN = pytest.StashKey[int]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``TEST_DATABASE_URL`` the PostgreSQL tests are deselected (not a wall of skips); the summary
    says so in one line."""
    if not os.environ.get("TEST_SLURM_CONF"):
        # Without a Slurm to talk to (make dev-slurm prints the settings; .ci/run starts one), deselected.
        slurm = [item for item in items if item.get_closest_marker("slurm")]
        if slurm:
            config.hook.pytest_deselected(items=slurm)
            items[:] = [item for item in items if not item.get_closest_marker("slurm")]
            config.stash[_SLURM_NOT_RUN] = len(slurm)
    if not os.environ.get("TEST_ALERTMANAGER_URL"):
        alerts = [item for item in items if item.get_closest_marker("alerts")]
        if alerts:
            config.hook.pytest_deselected(items=alerts)
            items[:] = [item for item in items if not item.get_closest_marker("alerts")]
            config.stash[_SLURM_NOT_RUN] = config.stash.get(_SLURM_NOT_RUN, 0) + len(alerts)
    if os.environ.get("TEST_DATABASE_URL"):
        config.stash[_NOT_RUN] = 0
        return
    postgres = [item for item in items if item.get_closest_marker("postgres")]
    config.stash[_NOT_RUN] = len(postgres)
    if postgres:
        config.hook.pytest_deselected(items=postgres)
        items[:] = [item for item in items if not item.get_closest_marker("postgres")]


def _backends_line(config: pytest.Config) -> tuple[str, bool]:
    not_run = config.stash.get(_NOT_RUN, 0)
    if not os.environ.get("TEST_DATABASE_URL") and not not_run:
        return "storage backends: SQLite (no PostgreSQL test selected)", True
    if os.environ.get("TEST_DATABASE_URL"):
        return "storage backends: SQLite and PostgreSQL (TEST_DATABASE_URL, each test in its own schema)", True
    return (
        f"storage backends: SQLite only; {not_run} PostgreSQL tests did NOT run"
        " (set TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test, see the README; .ci/run sets it)",
        False,
    )


def pytest_report_header(config: pytest.Config) -> str:
    return "storage backends: SQLite and PostgreSQL" if os.environ.get("TEST_DATABASE_URL") else "storage: SQLite only"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The very last line: which storage backends ran (a green run without PostgreSQL is half a run)."""
    line, both = _backends_line(config)
    terminalreporter.write_line(line, green=both, red=not both, bold=not both)
    if skipped := config.stash.get(_SLURM_NOT_RUN, 0):
        terminalreporter.write_line(
            f"slurm/alerts: {skipped} tests did NOT run (no TEST_SLURM_CONF / TEST_ALERTMANAGER_URL; "
            "eval the export lines of make dev-slurm and make dev-alerts)",
            red=True,
            bold=True,
        )
