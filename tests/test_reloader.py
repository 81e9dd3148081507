"""Reloading the library: new cases appear, a broken file keeps its previous case, nothing is dropped."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from conftest import NOW, copy_bundled_cases

from bot.app.reloader import fingerprint, reload_library, watch_library
from bot.app.service import IncidentService
from bot.library.case_store import load_library
from bot.ops.clock import fixed
from bot.storage.memory import MemoryStorage

ROOT = Path(__file__).resolve().parent.parent


def _service(directory: Path) -> IncidentService:
    return IncidentService(load_library(directory), MemoryStorage(), now=fixed(NOW))


def test_a_new_case_appears_after_reload(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427")
    service = _service(cases)
    assert service.get_case("PUB-0003") is None
    copy_bundled_cases(tmp_path, "PUB-0003")
    outcome = reload_library(service, cases)
    assert outcome.changed and outcome.cases == 2
    assert service.get_case("PUB-0003") is not None
    assert service.match("Watchdog caught collective operation timeout").best is not None


def test_a_broken_file_keeps_the_previous_version_serving(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427", "PUB-0003")
    service = _service(cases)
    (cases / "PUB-0003.json").write_text('{"id": "PUB-0003", "title": ', encoding="utf-8")
    data = json.loads((cases / "IL-0427.json").read_text(encoding="utf-8"))
    data["title"]["en"] = "Edited title"
    (cases / "IL-0427.json").write_text(json.dumps(data), encoding="utf-8")
    outcome = reload_library(service, cases)
    assert outcome.kept_previous == ("PUB-0003",)
    assert any("PUB-0003.json" in p.path and "invalid JSON" in p.message for p in outcome.problems)
    kept = service.get_case("PUB-0003")
    assert kept is not None and kept.title.get("en")
    edited = service.get_case("IL-0427")
    assert edited is not None and edited.title.en == "Edited title"
    result = service.match(
        "[rank1]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)"
    )
    assert result.best is not None and result.best.case_id == "PUB-0003"


def test_an_emptied_directory_keeps_the_library(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427")
    service = _service(cases)
    (cases / "IL-0427.json").unlink()
    outcome = reload_library(service, cases)
    assert not outcome.changed
    assert service.get_case("IL-0427") is not None


def test_fingerprint_changes_with_content(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427")
    before = fingerprint(cases)
    copy_bundled_cases(tmp_path, "PUB-0003")
    assert fingerprint(cases) != before


async def test_watcher_reloads_on_change_while_requests_are_served(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427")
    service = _service(cases)
    task = asyncio.create_task(watch_library(service, cases, interval_s=0.05, baseline=fingerprint(cases)))
    try:
        copy_bundled_cases(tmp_path, "PUB-0003")
        deadline = time.monotonic() + 10
        while service.get_case("PUB-0003") is None:
            assert service.get_case("IL-0427") is not None  # the old library serves meanwhile
            assert not task.done(), "the watcher stopped"
            assert time.monotonic() < deadline, "the watcher never reloaded"
            await asyncio.sleep(0.02)
    finally:
        task.cancel()
