"""The service's use cases on the in-memory storage: commands, preferences, noise window, similar."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from conftest import NOW

from bot.app.service import IncidentService, langs_for
from bot.library.case_store import load_library
from bot.model.results import Reply
from bot.ops.clock import fixed
from bot.storage.memory import MemoryStorage

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")
ECC = "[default3]:RuntimeError: CUDA error: uncorrectable ECC error encountered"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _service(**kwargs: object) -> IncidentService:
    kwargs.setdefault("now", fixed(NOW))
    return IncidentService(LIBRARY, MemoryStorage(), **kwargs)  # type: ignore[arg-type]


def test_language_order() -> None:
    assert langs_for(None, None) == ("en", "ko")
    assert langs_for(None, "ko-KR") == ("ko", "en")
    assert langs_for("en", "ko-KR") == ("en",)  # a saved en or ko: that language only
    assert langs_for("ko", "en-US") == ("ko",)
    assert langs_for("both", "ko-KR") == ("ko", "en")
    assert langs_for("both", "en-US") == ("en", "ko")


def test_lang_command_saves_the_preference() -> None:
    service = _service()
    saved = service.command("lang ko", user_id="U1").plain
    assert "한국어로만" in saved and "Saved" not in saved and " ko " not in saved  # in words, in Korean only
    assert service.langs_for_user("U1", "en-US") == ("ko",)
    saved = service.command("lang en", user_id="U1").plain
    assert "in English only" in saved and "저장" not in saved
    assert "both languages" in service.command("lang both", user_id="U1").plain
    assert service.langs_for_user("U1", "ko-KR") == ("ko", "en")
    assert "Usage" in service.command("lang fr", user_id="U1").plain


def test_auto_off_silences_a_channel_and_on_restores_it() -> None:
    service = _service()
    result = service.match(ECC)
    assert service.should_auto_reply("C1", result)
    service.command("auto off", channel_id="C1")
    assert not service.should_auto_reply("C1", result)
    assert service.should_auto_reply("C2", result)
    service.command("auto on", channel_id="C1")
    assert service.should_auto_reply("C1", result)


def test_the_same_case_is_not_reposted_within_the_noise_window() -> None:
    clock = Clock()
    service = _service(now=clock, noise_window=timedelta(minutes=60))
    result = service.match(ECC)
    reply = service.render_match(result, ("en", "ko"), explicit=False)
    service.record_reply("C1", "111.1", "100.1", reply, "auto")
    assert not service.should_auto_reply("C1", result)
    clock.now += timedelta(minutes=61)
    assert service.should_auto_reply("C1", result)


def test_commands_cover_every_verb() -> None:
    service = _service()
    assert "PUB-0025 (2026-08-04)" in service.command("").plain  # recent list, newest first
    assert "/incident search" in service.command("help").plain
    assert "IL-0427" in service.command("search ECC barrier").plain
    assert "Similar to IL-0427" in service.command("similar il-427").plain
    assert "No case 'IL-9999'" in service.command("IL-9999").plain
    assert "exact match" in service.command(ECC).plain
    assert "Digest preview" in service.command("digest").plain


def test_similar_adds_the_library_answer_and_falls_back_when_it_is_down() -> None:
    up = _service(remote_similar=lambda case_id: [("IL-0415", "GSP timeouts"), ("IL-9001", "")])
    text = up.command("similar IL-0427").plain
    assert "From the incident library:" in text and "IL-0415 — GSP timeouts" in text and "IL-9001" in text

    def down(case_id: str) -> list[tuple[str, str]]:
        raise ConnectionError("no route")

    fallback = _service(remote_similar=down).command("similar IL-0427")
    assert isinstance(fallback, Reply)
    assert "local similarity only" in fallback.plain
    assert "Similar to IL-0427" in fallback.plain


def test_a_case_that_leaves_the_library_takes_its_examples_with_it(tmp_path: Path) -> None:
    """Confirmed examples of a case that a reload removes are dropped at once, not ranked (which failed on
    the missing case until the stored examples changed)."""
    import shutil

    line = "gpu-doctor: HBM bank 5 parity sweep failed on device 3, quarantine requested by node agent"
    storage = MemoryStorage()
    service = IncidentService(LIBRARY, storage, now=fixed(NOW))
    now = NOW
    for user in ("U1", "U2"):
        storage.add_examples("PUB-0009", (line,), user, "C1", 1, now)
    assert service.refresh_examples()
    before = service.match(line)
    assert before.best is not None and before.best.case_id == "PUB-0009"
    smaller = tmp_path / "cases"
    shutil.copytree(ROOT / "cases", smaller)
    (smaller / "PUB-0009.json").unlink()
    service.reload(load_library(smaller))
    after = service.match(line)
    assert all(match.case_id != "PUB-0009" for match in after.matches)
    assert service.refresh_examples()  # read again after a reload…
    assert all(match.case_id != "PUB-0009" for match in service.match(line).matches)  # …still none for it
    service.reload(LIBRARY)  # the case comes back, and its examples with it
    service.refresh_examples()
    back = service.match(line)
    assert back.best is not None and back.best.case_id == "PUB-0009"
