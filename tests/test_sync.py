"""Library sync against a local fake of the library's API: added, updated, unchanged, rejected; the merge
keeps local work; conditional re-runs; retries, timeouts, pagination, review dates, dry run and the CLI."""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from library_server import LISTINGS, LibraryServer, strip_local

from bot.cli.main import main
from bot.digest.content import select_new_cases
from bot.library.case_store import load_library
from bot.library.client import LibraryClient
from bot.library.merge import dump_case, merge_case
from bot.library.sync import SyncJob, SyncReport, TerminalProgress, sync_library, terminal_progress
from bot.model.case import Case

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "cases"
# The library seed as served by its API; a verbatim copy lives with the tests (CI may lack ../shared).
SEED = ROOT / "tests" / "fixtures" / "seed_IL-0125.json"
IDS = ["IL-0125", "IL-0414", "IL-0427", "PUB-0001"]


def bundled(case_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((BUNDLED / f"{case_id}.json").read_text(encoding="utf-8"))
    return data


def served(case_id: str) -> dict[str, Any]:
    return strip_local(bundled(case_id))


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def library() -> Iterator[LibraryServer]:
    with LibraryServer() as server:
        for case_id in IDS:
            server.put(served(case_id))
        yield server


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "cases"
    directory.mkdir()
    return directory


@pytest.fixture
def state_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "sync-state.json"


class Syncer:
    """Runs syncs against one server with a recording sleep (no test ever sleeps for a backoff)."""

    def __init__(self, server: LibraryServer, cases_dir: Path, state_path: Path) -> None:
        self.server = server
        self.cases_dir = cases_dir
        self.state_path = state_path
        self.sleeps: list[float] = []

    def client(self, timeout: float = 5.0, retries: int = 2) -> LibraryClient:
        return LibraryClient(self.server.base_url, timeout=timeout, retries=retries, sleep=self.sleeps.append)

    def __call__(self, timeout: float = 5.0, retries: int = 2, **kwargs: Any) -> SyncReport:
        with self.client(timeout, retries) as client:
            return sync_library(client, self.cases_dir, state_path=self.state_path, **kwargs)


@pytest.fixture
def sync(library: LibraryServer, cases_dir: Path, state_path: Path) -> Syncer:
    return Syncer(library, cases_dir, state_path)


# -- added, unchanged, updated ------------------------------------------------------------------------


def test_first_sync_adds_every_case_in_the_bundled_format(sync: Syncer, cases_dir: Path) -> None:
    seed = json.loads(SEED.read_text(encoding="utf-8"))  # the API's own key order, not the model's
    sync.server.put(seed)
    report = sync()
    assert report.added == IDS and report.ok and report.fetched == 4
    assert not report.updated and not report.unchanged and not report.rejected
    for case_id in ["IL-0414", "IL-0427", "PUB-0001"]:
        assert (cases_dir / f"{case_id}.json").read_bytes() == dump_case(served(case_id))
    written = (cases_dir / "IL-0125.json").read_text(encoding="utf-8")
    assert "Jean Zay 에서" in written and "\\u" not in written and written.endswith("}\n")
    assert list(json.loads(written)) == [key for key in Case.model_fields if key in seed]
    assert json.loads(written) == seed
    library = load_library(cases_dir)
    assert sorted(library.cases) == IDS and not library.errors
    assert not [p for p in cases_dir.iterdir() if not p.name.endswith(".json")]  # no temporary files left


def test_a_rerun_transfers_only_what_changed(sync: Syncer, cases_dir: Path, state_path: Path) -> None:
    sync()
    state = json.loads(state_path.read_text(encoding="utf-8"))
    assert state["api_url"] == sync.server.base_url and all(state["cases"][i]["etag"] for i in IDS)
    before = snapshot(cases_dir)

    again = sync()
    assert again.unchanged == IDS and again.fetched == 0 and again.not_modified == 4 and not again.changed
    assert snapshot(cases_dir) == before
    for case_id in IDS:
        assert sync.server.statuses(f"/cases/{case_id}") == [200, 304]
    assert all("if-none-match" in r.headers for r in sync.server.case_requests()[4:])

    changed = served("IL-0427")
    changed["lessons"]["en"] = "Exclude a node that crashed twice before the next array job starts."
    sync.server.put(changed)
    third = sync()
    assert third.updated == ["IL-0427"] and third.fetched == 1 and third.not_modified == 3
    assert json.loads((cases_dir / "IL-0427.json").read_bytes())["lessons"]["en"].startswith("Exclude a node")


def test_a_deleted_local_file_is_fetched_again_in_full(sync: Syncer, cases_dir: Path) -> None:
    sync()
    (cases_dir / "IL-0427.json").unlink()
    report = sync()
    assert report.added == ["IL-0427"] and sync.server.statuses("/cases/IL-0427") == [200, 200]
    last = [r for r in sync.server.case_requests() if r.path == "/cases/IL-0427"][-1]
    assert "if-none-match" not in last.headers


# -- the merge keeps local work -----------------------------------------------------------------------


def test_update_keeps_local_only_fields_templates_and_language_sides(sync: Syncer, cases_dir: Path) -> None:
    local = bundled("IL-0414")
    for step, template in zip(
        local["remediation"], ["nvidia-smi -q -i {pci}", "true {gpu}", "true {node}"], strict=False
    ):
        step["template"] = template  # a local extension on library text: it follows its step
    (cases_dir / "IL-0414.json").write_bytes(dump_case(local))
    remote = served("IL-0414")
    remote["summary"]["en"] = "Rewritten by the library's editors."
    del remote["title"]["ko"]  # a side the library does not send
    remote["lessons"] = {"en": "New lesson.", "ko": None}  # a side the library sends empty
    steps = remote["remediation"]
    steps[0], steps[1] = steps[1], steps[0]  # reordered: templates follow the text
    steps[2]["text"] = {"en": "drain the node on Xid 64 or Xid 95 and replace the GPU"}  # reworded, no ko
    remote["postmortem_url"] = "https://example.invalid/pm/414"  # a field the bot does not know yet
    sync.server.put(remote)

    report = sync()
    assert report.updated == ["IL-0414"] and report.ok and not report.notes
    merged = json.loads((cases_dir / "IL-0414.json").read_text(encoding="utf-8"))
    assert merged["failure_class"] == local["failure_class"] and merged["signatures"] == local["signatures"]
    for field in ("runbook", "gist", "review_notes"):  # the local fields of the 3 am reply
        assert merged[field] == local[field] and field not in remote
    old = local["remediation"]
    assert [s.get("template") for s in merged["remediation"]] == [
        old[1]["template"],
        old[0]["template"],
        old[2]["template"],
        None,
        None,
    ]
    assert merged["remediation"][0]["text"] == old[1]["text"]
    assert merged["remediation"][2]["text"] == {
        "en": "drain the node on Xid 64 or Xid 95 and replace the GPU",
        "ko": old[2]["text"]["ko"],
    }
    assert merged["title"] == local["title"]
    assert merged["summary"] == {"en": "Rewritten by the library's editors.", "ko": local["summary"]["ko"]}
    assert merged["lessons"] == {"en": "New lesson.", "ko": local["lessons"]["ko"]}
    assert merged["postmortem_url"] == "https://example.invalid/pm/414"
    assert list(merged)[: len(local)] == list(local)  # the local file's key order: small diffs
    assert not load_library(cases_dir).errors


def test_merge_reports_a_template_whose_step_is_gone() -> None:
    local = bundled("IL-0427")
    local["remediation"][2]["template"] = "sbatch --exclude={node} job.sbatch"
    remote = served("IL-0427")
    remote["remediation"] = remote["remediation"][:2]
    merged, notes = merge_case(local, remote)
    assert len(merged["remediation"]) == 2 and "template" not in json.dumps(merged["remediation"])
    assert len(notes) == 1 and "sbatch --exclude={node}" in notes[0]


def test_merge_keeps_language_sides_in_nested_and_null_fields() -> None:
    local = bundled("IL-0414")
    remote = served("IL-0414")
    remote["action_items"] = [{"en": item["en"]} for item in remote["action_items"]]
    remote["detection"] = None
    remote["review"]["reviewed_at"] = "2026-11-10"
    merged, _ = merge_case(local, remote)
    assert merged["action_items"] == local["action_items"]
    assert merged["detection"] == local["detection"]
    assert merged["review"]["reviewed_at"] == "2026-11-10"
    assert merge_case(None, remote)[0] == remote  # a new case is taken as served


def test_an_unreadable_local_file_is_replaced_with_a_note(sync: Syncer, cases_dir: Path) -> None:
    (cases_dir / "IL-0427.json").write_text("{ not json", encoding="utf-8")
    report = sync()
    assert "IL-0427" in report.updated and any("unreadable local file" in n for n in report.notes)
    assert json.loads((cases_dir / "IL-0427.json").read_bytes()) == served("IL-0427")


# -- rejected: an invalid case never replaces a good file --------------------------------------------


def test_invalid_remote_cases_are_rejected_and_good_local_files_kept(sync: Syncer, cases_dir: Path) -> None:
    for case_id in ["IL-0414", "IL-0427", "PUB-0001"]:
        (cases_dir / f"{case_id}.json").write_bytes(dump_case(bundled(case_id)))
    before = snapshot(cases_dir)
    sync.server.raw("IL-0427", b'{"id": "IL-0427", "title": ')
    broken = served("IL-0414")
    broken["remediation"] = "reset the GPU"
    sync.server.put(broken)
    sync.server.put({**served("PUB-0001"), "id": "PUB-0002"})
    sync.server.cases["PUB-0001"] = sync.server.cases.pop("PUB-0002")  # listed as PUB-0001, answers PUB-0002
    sync.server.put({"id": "IL-0999", "signatures": [{"kind": "regex", "pattern": "(unclosed group"}]})

    report = sync()
    reasons = {r.case_id: " ".join(r.reasons) for r in report.rejected}
    assert set(reasons) == {"IL-0427", "IL-0414", "PUB-0001", "IL-0999"}
    assert "invalid JSON" in reasons["IL-0427"]
    assert "remediation" in reasons["IL-0414"]
    assert "asked for PUB-0001" in reasons["PUB-0001"] and "PUB-0002" in reasons["PUB-0001"]
    assert "signatures[0].pattern" in reasons["IL-0999"]
    assert report.added == ["IL-0125"] and not report.ok
    after = snapshot(cases_dir)
    assert {name: after[name] for name in before} == before and "IL-0999.json" not in after

    sync()  # a rejected case is asked for in full again, not with the validators of the bad answer
    assert sync.server.statuses("/cases/IL-0427") == [200, 200]


# -- transport trouble --------------------------------------------------------------------------------


def test_a_500_and_a_dropped_connection_are_retried_with_backoff(sync: Syncer, cases_dir: Path) -> None:
    sync.server.fail("/cases/IL-0427", 500)
    sync.server.fail("/cases/IL-0427", 0)
    report = sync()
    assert report.added == IDS and report.ok
    assert sync.server.statuses("/cases/IL-0427") == [500, 0, 200]
    assert sync.sleeps == [0.5, 1.0]


def test_a_timeout_is_reported_and_the_other_cases_still_sync(sync: Syncer, cases_dir: Path) -> None:
    sync.server.slow("/cases/IL-0427", times=2)
    report = sync(timeout=0.2, retries=1)
    assert [r.case_id for r in report.failed] == ["IL-0427"]
    assert "timed out after 0.2s (2 attempts)" in report.failed[0].reasons[0]
    assert report.added == ["IL-0125", "IL-0414", "PUB-0001"] and not report.ok
    assert "failed IL-0427" in report.summary() and not (cases_dir / "IL-0427.json").exists()
    assert sync.sleeps == [0.5]


def test_an_unreachable_library_writes_nothing(cases_dir: Path, state_path: Path) -> None:
    with LibraryClient(f"http://127.0.0.1:{free_port()}", retries=1, sleep=lambda _: None) as client:
        report = sync_library(client, cases_dir, state_path=state_path)
    assert report.error and report.error.startswith("listing failed") and "connection failed" in report.error
    assert not report.ok and not list(cases_dir.iterdir()) and not state_path.exists()


def test_a_sync_stops_after_several_cases_in_a_row_cannot_be_fetched(sync: Syncer) -> None:
    for case_id in IDS:
        sync.server.fail(f"/cases/{case_id}", 503)
    report = sync(retries=0)
    assert report.error == "stopped: 3 cases in a row could not be fetched"
    assert len(report.failed) == 3 and sync.server.statuses("/cases/PUB-0001") == []


# -- pagination, since, review dates ------------------------------------------------------------------


@pytest.mark.parametrize("listing", LISTINGS)
def test_every_listing_shape_is_paged_through(listing: str, cases_dir: Path, state_path: Path) -> None:
    with LibraryServer(listing=listing, page_size=2) as server:
        for case_id in [*IDS, "PUB-0002"]:
            server.put(served(case_id))
        with LibraryClient(server.base_url) as client:
            report = sync_library(client, cases_dir, state_path=state_path)
        pages = [r for r in server.requests if r.path == "/cases"]
    assert report.added == [*IDS, "PUB-0002"] and report.ok
    assert len(pages) == (1 if listing.startswith("array") else 3)
    assert report.fetched == (0 if listing == "array-whole" else 5)  # whole cases need no second request


@pytest.mark.parametrize("listing", ["array-summary", "paged-cursor", "paged-url"])
def test_since_syncs_only_cases_updated_since(listing: str, cases_dir: Path) -> None:
    with LibraryServer(listing=listing, page_size=1) as server:
        for case_id, day in zip(IDS, ["2026-01-05", "2026-02-05", "2026-03-05", "2026-04-05"], strict=True):
            server.put({**served(case_id), "updated_at": f"{day}T10:00:00Z"})
        with LibraryClient(server.base_url) as client:
            report = sync_library(client, cases_dir, since="2026-03-01")
        assert server.requests[0].query == {"since": "2026-03-01T00:00:00+00:00"}
    assert report.added == ["IL-0427", "PUB-0001"]


def test_a_case_that_gains_a_review_date_is_reported_and_reaches_the_digest(sync: Syncer, cases_dir: Path) -> None:
    sync()
    reviewed = served("IL-0427")
    reviewed["review"] = {**reviewed["review"], "reviewed_at": "2026-11-10T09:00:00Z", "reviewed_by": "kim"}
    sync.server.put(reviewed)
    report = sync()
    assert report.updated == ["IL-0427"] and report.newly_reviewed == ["IL-0427"]
    assert "newly reviewed (eligible for the next digest): IL-0427" in report.summary()
    slot = datetime(2026, 11, 16, 0, 0, tzinfo=UTC)
    assert [c.id for c in select_new_cases(load_library(cases_dir), set(), slot, 30)] == ["IL-0427"]
    assert sync().newly_reviewed == []


# -- dry run, progress, the periodic job --------------------------------------------------------------


def test_dry_run_writes_nothing(sync: Syncer, cases_dir: Path, state_path: Path) -> None:
    (cases_dir / "IL-0414.json").write_bytes(dump_case(bundled("IL-0414")))
    changed = served("IL-0414")
    changed["summary"]["en"] = "Changed upstream."
    sync.server.put(changed)
    before = snapshot(cases_dir)
    report = sync(dry_run=True)
    assert report.dry_run and report.added == ["IL-0125", "IL-0427", "PUB-0001"] and report.updated == ["IL-0414"]
    assert "dry run: nothing written" in report.summary()
    assert snapshot(cases_dir) == before and not state_path.exists()
    assert not (cases_dir.parent / "missing").exists()
    with sync.client() as client:
        sync_library(client, cases_dir.parent / "missing", dry_run=True)
    assert not (cases_dir.parent / "missing").exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal(sync: Syncer) -> None:
    assert terminal_progress(io.StringIO()) is None
    screen = _Terminal()
    bar = terminal_progress(screen)
    assert isinstance(bar, TerminalProgress)
    sync(progress=bar)
    drawn = screen.getvalue()
    assert drawn.count("\r") == 4 and "] 4/4 PUB-0001" in drawn and drawn.endswith("\n")
    assert "[" + "#" * 30 + "]" in drawn


def test_sync_job_reports_whether_anything_changed(library: LibraryServer, cases_dir: Path, state_path: Path) -> None:
    changes: list[SyncReport] = []
    with LibraryClient(library.base_url) as client:
        job = SyncJob(client, cases_dir, state_path=state_path, on_change=changes.append)
        assert job.run() is True
        assert job.run() is False
    assert len(changes) == 1 and changes[0].added == IDS
    with LibraryClient(f"http://127.0.0.1:{free_port()}", retries=0) as client:
        down = SyncJob(client, cases_dir, state_path=state_path)
        assert down.run() is False and down.last_report is not None and down.last_report.error


# -- the command line ---------------------------------------------------------------------------------


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no developer .env is read
    return tmp_path


def test_cli_sync_end_to_end(
    cli_env: Path, library: LibraryServer, cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--cases", str(cases_dir), "sync", "--api-url", library.base_url]
    assert main([*base, "--dry-run"]) == 0
    assert "added 4" in capsys.readouterr().out and not list(cases_dir.iterdir())

    assert main(base) == 0
    out = capsys.readouterr().out
    assert f"Library sync from {library.base_url}" in out and "added 4, updated 0, unchanged 0" in out
    assert (cli_env / "data" / "sync-state.json").is_file() and len(list(cases_dir.glob("*.json"))) == 4

    assert main(base) == 0
    assert "unchanged 4, rejected 0, failed 0 (transferred 0, not modified 4)" in capsys.readouterr().out

    library.raw("IL-0427", b"<html>maintenance</html>")
    assert main(base) == 1
    assert "rejected IL-0427" in capsys.readouterr().out


def test_cli_sync_failures_and_usage(
    cli_env: Path, cases_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["--cases", str(cases_dir), "sync"]) == 2
    assert "--api-url" in capsys.readouterr().err
    assert main(["sync", "--api-url", "ftp://example.invalid"]) == 2
    assert main(["sync", "--api-url", "http://127.0.0.1:1", "--since", "last week"]) == 2
    capsys.readouterr()
    down = f"http://127.0.0.1:{free_port()}"
    assert main(["--cases", str(cases_dir), "sync", "--api-url", down, "--retries", "0"]) == 1
    assert "error: listing failed" in capsys.readouterr().out


def test_sources_added_here_follow_the_librarys_own() -> None:
    local = {"id": "X", "sources": [{"url": "https://a"}, {"url": "https://docs.nvidia.com/x"}]}
    remote = {"id": "X", "sources": [{"url": "https://a", "kind": "blog"}, {"url": "https://b"}]}
    merged = merge_case(local, remote)[0]["sources"]
    assert merged == [{"url": "https://a", "kind": "blog"}, {"url": "https://b"}, {"url": "https://docs.nvidia.com/x"}]


def test_a_severity_chosen_here_survives_a_library_that_says_unknown() -> None:
    """The bot's scale (job, node, fleet) is chosen from a case's facts; a sync keeps it while the library
    says "unknown" or nothing, and takes the library's value once it says more."""
    local = {"id": "IL-0414", "severity": "node", "title": {"en": "t"}}
    for remote_says in ("unknown", None, ""):
        remote = {"id": "IL-0414", "severity": remote_says, "title": {"en": "t"}}
        assert merge_case(local, remote)[0]["severity"] == "node"
    assert merge_case(local, {"id": "IL-0414", "title": {"en": "t"}})[0]["severity"] == "node"
    assert merge_case(local, {"id": "IL-0414", "severity": "sev1", "title": {"en": "t"}})[0]["severity"] == "sev1"
    assert merge_case({"id": "X", "severity": "unknown"}, {"id": "X", "severity": "sev2"})[0]["severity"] == "sev2"
