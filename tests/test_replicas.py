"""Real bot processes (``python -m bot.cli run``, HTTP mode) sharing one PostgreSQL schema and one fake
Slack Web API in this process: a delivery and its retry sent to two replicas give exactly one reply, a
digest due in both gives exactly one post, and SIGHUP reloads the library while ``/readyz`` stays 200.

Needs PostgreSQL: runs whenever ``TEST_DATABASE_URL`` is set (each test in its own schema), else skips.
Every wait polls a condition against a deadline; the processes are always terminated.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from conftest import NOW, postgres_schema
from fake_slack import wait_for
from slack_harness import BOT_TOKEN, SECRET, HarnessSlack, event_envelope, message_event, sign

from bot.slack.app import DUPLICATE_HEADER

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parent.parent
ECC_PASTE = (ROOT / "tests" / "fixtures" / "pastes" / "hw-ecc-pytorch-three-lines.txt").read_text()
START_DEADLINE = 60.0  # two interpreters importing and compiling the library on a busy 2-core box
STOP_DEADLINE = 15.0


# -- processes -------------------------------------------------------------------------------------------


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` (Prometheus text) whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        found = re.match(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$", line)
        if not found or found.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', found.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(found.group(3))
    return total


_LISTENING = re.compile(r"health checks on \[\('127\.0\.0\.1', (\d+)\)")


class BotProcess:
    """One ``incident-bot run`` in HTTP mode on a loopback port of its own choosing (``PORT=0``: the port
    is read from its log line, so two tests can never race for one); logs (JSON) go to a file."""

    def __init__(self, name: str, env: dict[str, str], workdir: Path) -> None:
        self.name = name
        self.url = ""
        self.log_path = workdir / f"{name}.log"
        self.env = {**env, "PORT": "0"}
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self._http: httpx.Client | None = None

    @property
    def http(self) -> httpx.Client:
        if self._http is None:
            raise AssertionError(f"{self.name} has no address yet (wait_ready first)")
        return self._http

    def start(self) -> BotProcess:
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "run"],
                cwd=self.workdir,  # no stray .env
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_ready(self, deadline: float = START_DEADLINE) -> None:
        def ready() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited {self.proc.returncode}:\n{self.log()[-3000:]}")
            if self._http is None:
                listening = _LISTENING.search(self.log())
                if listening is None:
                    return False
                self.url = f"http://127.0.0.1:{listening.group(1)}"
                self._http = httpx.Client(base_url=self.url, timeout=15)
            try:
                return self.http.get("/readyz").status_code == 200
            except httpx.TransportError:
                return False

        try:
            wait_for(ready, deadline, interval=0.1)
        except AssertionError as exc:
            raise AssertionError(f"{self.name} not ready: {exc}\n{self.log()[-3000:]}") from None

    def metrics(self) -> str:
        return self.http.get("/metrics").text

    def stop(self) -> None:
        if self._http is not None:
            self._http.close()
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(STOP_DEADLINE)


def _clock_environment() -> dict[str, str]:
    """faketime's variables, when the suite runs under it: the bots keep the test's clock (signed requests
    carry the test's time, and Slack's five-minute replay window is checked against the bot's)."""
    return {k: v for k, v in os.environ.items() if k.startswith("FAKETIME") or k == "LD_PRELOAD"}


@pytest.fixture
def database_url() -> Iterator[str]:
    """A fresh PostgreSQL schema (not migrated: the replicas migrate it themselves, concurrently)."""
    with postgres_schema() as url:
        yield url


@pytest.fixture
def bots(tmp_path: Path, database_url: str, fake: HarnessSlack) -> Iterator[Callable[..., list[BotProcess]]]:
    """``bots(n, **settings)`` starts ``n`` replicas on the shared schema and waits until each is ready."""
    started: list[BotProcess] = []

    def launch(count: int, **settings: str) -> list[BotProcess]:
        env = {
            **_clock_environment(),
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": fake.base_url,
            "DATABASE_URL": database_url,
            "HOST": "127.0.0.1",
            "CASES_DIR": str(ROOT / "cases"),
            "DATA_DIR": str(tmp_path / "data"),
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "INFO",
            "MATCH_DEADLINE_SECONDS": "20",
            **settings,
        }
        procs = []
        for _ in range(count):
            workdir = tmp_path / f"bot{len(started)}"
            workdir.mkdir()
            proc = BotProcess(chr(ord("A") + len(started)), env, workdir)
            started.append(proc)  # registered before start: the finalizer stops whatever was started
            procs.append(proc.start())
        for proc in procs:
            proc.wait_ready()
        return procs

    try:
        yield launch
    finally:
        for proc in started:
            proc.stop()


# -- signed requests -------------------------------------------------------------------------------------


def send_event(bot: BotProcess, event: dict[str, Any], event_id: str, retry_num: int | None = None) -> httpx.Response:
    envelope = event_envelope(event, event_id)
    body = json.dumps(envelope)
    headers = {"Content-Type": "application/json", **sign(body)}
    if retry_num is not None:
        headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
    return bot.http.post("/slack/events", content=body.encode(), headers=headers)


def send_command(bot: BotProcess, fake: HarnessSlack, text: str) -> tuple[httpx.Response, str]:
    """``/incident text``; returns the response and the fake path its reply is posted to."""
    hook = f"hooks/{uuid.uuid4().hex}"
    form = {
        "token": "legacy-verification-token",
        "team_id": "T1",
        "channel_id": "C1",
        "user_id": "U1",
        "command": "/incident",
        "text": text,
        "api_app_id": "A1",
        "response_url": f"{fake.url}/{hook}",
        "trigger_id": f"1.2.{uuid.uuid4().int % 10**6}",
    }
    body = urlencode(form)
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(body)}
    return bot.http.post("/slack/events", content=body.encode(), headers=headers), hook


def posts(fake: HarnessSlack, channel: str) -> list[dict[str, Any]]:
    return [c.body for c in fake.calls("chat.postMessage") if c.body.get("channel") == channel]


# -- tests -----------------------------------------------------------------------------------------------


@pytest.mark.timing
def test_a_delivery_and_its_retry_on_two_replicas_give_one_reply(
    bots: Callable[..., list[BotProcess]], fake: HarnessSlack
) -> None:
    a, b = bots(2)
    # Slack retries (same event_id) after A took too long; the retry lands on replica B.
    event = message_event(ECC_PASTE, channel="C1")
    first = send_event(a, event, "EvREPLICA1")
    retry = send_event(b, event, "EvREPLICA1", retry_num=1)
    assert first.status_code == 200 and DUPLICATE_HEADER not in first.headers
    assert retry.status_code == 200 and retry.headers.get(DUPLICATE_HEADER) == "duplicate"
    wait_for(lambda: posts(fake, "C1"), timeout=30)
    (reply,) = posts(fake, "C1")
    assert reply["thread_ts"] == event["ts"]

    # Two first deliveries racing on both replicas at once: one claim wins.
    race = message_event(ECC_PASTE, channel="C2")
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda bot: send_event(bot, race, "EvREPLICA2"), (a, b)))
    assert sorted(r.headers.get(DUPLICATE_HEADER, "") for r in answers) == ["", "duplicate"]
    wait_for(lambda: posts(fake, "C2"), timeout=30)

    # Both replicas have handled everything they acked: one reply per message, counted once overall.
    def replies() -> float:
        return sum(metric(bot.metrics(), "incident_bot_replies_posted_total") for bot in (a, b))

    wait_for(lambda: replies() >= 2, timeout=30)
    assert len(posts(fake, "C1")) == 1 and len(posts(fake, "C2")) == 1
    assert replies() == 2
    for bot in (a, b):
        assert metric(bot.metrics(), "incident_bot_events_total", type="message") == 2  # every delivery counted
    assert '"event_id": "EvREPLICA1"' in a.log() and '"event_id": "EvREPLICA1"' in b.log()


@pytest.mark.timing
def test_a_digest_due_in_both_replicas_is_posted_once(
    bots: Callable[..., list[BotProcess]], fake: HarnessSlack, tmp_path: Path
) -> None:
    cases = tmp_path / "digest-cases"
    cases.mkdir()
    data = json.loads((ROOT / "cases" / "IL-0427.json").read_text(encoding="utf-8"))
    yesterday = (NOW - timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0)
    data["review"]["reviewed_at"] = yesterday.isoformat().replace("+00:00", "Z")
    (cases / "IL-0427.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    # Daily at midnight UTC: today's slot has passed and covers yesterday's review; both replicas run the
    # start-up catch-up for it at the same time.
    a, b = bots(
        2,
        CASES_DIR=str(cases),
        DIGEST_CHANNEL="CDIGEST",
        DIGEST_CRON="0 0 * * *",
        DIGEST_TIMEZONE="UTC",
        INCIDENT_BOT_TEST_NOW=NOW.isoformat(),
    )

    def runs(bot: BotProcess) -> float:
        return metric(bot.metrics(), "incident_bot_digest_runs_total")

    wait_for(lambda: runs(a) >= 1 and runs(b) >= 1, timeout=60)
    (post,) = posts(fake, "CDIGEST")
    assert "IL-0427" in json.dumps(post, ensure_ascii=False)
    statuses = {
        status
        for bot in (a, b)
        for status in ("posted", "done", "busy", "empty", "lost", "failed")
        if metric(bot.metrics(), "incident_bot_digest_runs_total", status=status)
    }
    assert "posted" in statuses and statuses <= {"posted", "done", "busy"}
    assert all(metric(bot.metrics(), "incident_bot_digest_failures_total") == 0 for bot in (a, b))


def test_sighup_reloads_the_library_while_readyz_stays_200(
    bots: Callable[..., list[BotProcess]], fake: HarnessSlack, tmp_path: Path
) -> None:
    cases = tmp_path / "live-cases"
    shutil.copytree(ROOT / "cases", cases)
    (bot,) = bots(1, CASES_DIR=str(cases))
    response, hook = send_command(bot, fake, "IL-9901")
    assert response.status_code == 200
    wait_for(lambda: fake.calls(hook), timeout=20)
    assert "Hot reloaded case" not in json.dumps(fake.calls(hook)[0].body)

    statuses: list[int] = []
    stop = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=bot.url, timeout=10) as client:
            while not stop.is_set():
                try:
                    statuses.append(client.get("/readyz").status_code)
                except httpx.TransportError:
                    statuses.append(0)
                time.sleep(0.02)  # not stop.wait(0.02): a timed wait never ends under faketime (README)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    try:
        wait_for(lambda: len(statuses) >= 3, timeout=10)
        data = json.loads((cases / "IL-0427.json").read_text(encoding="utf-8"))
        data.update(id="IL-9901", title={"en": "Hot reloaded case", "ko": "다시 읽은 사례"})
        data.pop("signatures", None)
        (cases / "IL-9901.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        (cases / "IL-0427.json").write_text('{"id": "IL-0427", "title": ', encoding="utf-8")  # broken now
        assert bot.proc is not None
        bot.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: metric(bot.metrics(), "incident_bot_library_reloads_total") >= 1, timeout=30)
        before = len(statuses)
        wait_for(lambda: len(statuses) >= before + 3, timeout=10)  # still answering after the swap
    finally:
        stop.set()
        prober.join(timeout=10)
    assert statuses and set(statuses) == {200}, f"readyz answered {sorted(set(statuses))}"
    assert bot.proc.poll() is None  # SIGHUP did not end the process
    # The new case is served; the broken file's previous version keeps its case serving.
    assert metric(bot.metrics(), "incident_bot_library_reloads_total", outcome="partial") == 1
    _, hook = send_command(bot, fake, "IL-9901")
    wait_for(lambda: fake.calls(hook), timeout=20)
    assert "Hot reloaded case" in json.dumps(fake.calls(hook)[0].body, ensure_ascii=False)
    _, hook = send_command(bot, fake, "IL-0427")
    wait_for(lambda: fake.calls(hook), timeout=20)
    assert "IL-0427" in json.dumps(fake.calls(hook)[0].body) and "tr1-13B" in json.dumps(fake.calls(hook)[0].body)
    log = bot.log()
    assert "IL-0427.json" in log and "sighup" in log  # which file was bad, and what triggered the reload
