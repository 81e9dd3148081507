"""Shared fixtures: a fresh storage per backend (SQLite file; PostgreSQL in its own schema when
``TEST_DATABASE_URL`` is set), the fake Slack Web API, and settings built from a dict."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from fake_slack import FakeSlack

from bot.library.case_store import CaseLibrary, load_library
from bot.model.case import Case
from bot.ops.settings import BUNDLED_CASES, Settings
from bot.storage import Storage, open_storage

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def postgres_schema_url(base_url: str, schema: str) -> str:
    """``base_url`` with ``search_path`` set to ``schema`` for every connection made from it."""
    sep = "&" if "?" in base_url else "?"
    return f"{base_url}{sep}options={quote(f'-csearch_path={schema}')}"


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL for a fresh PostgreSQL schema of ``TEST_DATABASE_URL``, dropped afterwards. Skips the test
    only when ``TEST_DATABASE_URL`` is not set (``.ci/run`` always sets it)."""
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        pytest.skip("TEST_DATABASE_URL is not set")
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


def pytest_unconfigure(config: Any) -> None:
    """Say loudly, as the very last lines, when the PostgreSQL half of the suite did not run: a green run
    without it is half a run."""
    terminalreporter = config.pluginmanager.get_plugin("terminalreporter")
    if os.environ.get("TEST_DATABASE_URL") or terminalreporter is None:
        return
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "TEST_DATABASE_URL is not set" in str(getattr(report, "longrepr", ""))
    ]
    if not skipped:
        return
    terminalreporter.write_sep("!", f"{len(skipped)} PostgreSQL tests did NOT run", red=True, bold=True)
    terminalreporter.write_line(
        "Set TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test (see the README) to run them;"
        " .ci/run starts PostgreSQL and sets it.",
        red=True,
    )
