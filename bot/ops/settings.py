"""The one typed ``Settings`` object: built once at the entry point from the environment and ``.env``.

Secrets are ``SecretStr`` so they never print. Inconsistent combinations fail at start-up with a message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.ops.settings_sched import SchedulerSettings

BUNDLED_CASES = Path(__file__).resolve().parents[2] / "cases"
_CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]+")
# Set by commands that only call the Web API (``digest --post``): they receive no request, so HTTP mode's
# signing secret is not needed.
_POSTING_ONLY: ContextVar[bool] = ContextVar("posting_only", default=False)


@contextmanager
def posting_only() -> Iterator[None]:
    """Settings read inside are for a command that only posts (no HTTP server: no signing secret)."""
    token = _POSTING_ONLY.set(True)
    try:
        yield
    finally:
        _POSTING_ONLY.reset(token)


_DEFAULT_CRON = "0 9 * * mon"
# What deploy/.env.example and the docs put where a real value goes: REPLACE-ME (also inside
# xoxb-REPLACE-ME or a URL), CHANGE-ME, or an <angle-bracketed> hint. Bounded: values are short settings.
_PLACEHOLDER = re.compile(r"REPLACE[-_]?ME|CHANGE[-_]?ME|<[^<>\n]{1,80}>", re.IGNORECASE)


def placeholders(values: dict[str, object]) -> list[str]:
    """The names of the settings in ``values`` (environment spelling) still holding a placeholder."""
    return sorted(
        name.upper()
        for name, value in values.items()
        if isinstance(value, str) and _PLACEHOLDER.search(value[:4096]) is not None
    )


class Settings(SchedulerSettings, BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True)

    cases_dir: Path = Field(
        default=BUNDLED_CASES,
        validation_alias="CASES_DIR",
        description="case directory",
        json_schema_extra={"shown_default": "the bundled `cases/`"},
    )
    data_dir: Path = Field(
        default=Path("data"), validation_alias="DATA_DIR", description="where the embedded SQLite file lives"
    )
    database_url: str | None = Field(
        default=None,
        validation_alias="DATABASE_URL",
        description="`sqlite:///…` or `postgresql://…` (several bot processes share PostgreSQL)",
        json_schema_extra={"shown_default": "`sqlite:///$DATA_DIR/incident-bot.sqlite3`"},
    )

    slack_bot_token: SecretStr | None = Field(
        default=None,
        validation_alias="SLACK_BOT_TOKEN",
        description=(
            "`xoxb-…`; without it bare `incident-bot` opens the console and `incident-bot run` refuses to start"
        ),
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias="SLACK_SIGNING_SECRET", description="required in HTTP mode"
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias="SLACK_APP_TOKEN", description="`xapp-…`; when set, Socket Mode"
    )
    slack_api_url: str = Field(
        default="https://slack.com/api/",
        validation_alias="SLACK_API_URL",
        description="Web API base URL for every client (point it at a fake in tests)",
    )
    slack_file_hosts: str = Field(
        default="https://files.slack.com",
        validation_alias="SLACK_FILE_HOSTS",
        description=(
            "comma-separated origins the bot token may be sent to when downloading a shared file; a "
            "file elsewhere, or a redirect off them, is not fetched"
        ),
    )
    port: int = Field(default=3000, ge=0, le=65535, validation_alias="PORT", description="port of the HTTP listener")
    host: str = Field(
        default="0.0.0.0",  # noqa: S104 - a server listens on all interfaces
        validation_alias="HOST",
        description=("address of the HTTP listener: `/slack/events` (HTTP mode), `/healthz`, `/readyz`, `/metrics`"),
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", validation_alias="LOG_LEVEL", description="`DEBUG`, `INFO`, `WARNING` or `ERROR`"
    )
    log_format: Literal["auto", "json", "console"] = Field(
        default="auto",
        validation_alias="LOG_FORMAT",
        description="`json`, `console`, or `auto` (JSON unless stderr is a terminal)",
    )

    digest_channel: str | None = Field(
        default=None,
        validation_alias="DIGEST_CHANNEL",
        description="channel id for the weekly digest; no digest job without it",
    )
    digest_cron: str = Field(
        default=_DEFAULT_CRON,
        validation_alias="DIGEST_CRON",
        description="when the digest goes out (crontab: minute hour day month weekday)",
    )
    digest_timezone: str = Field(
        default="Asia/Seoul",
        validation_alias="DIGEST_TIMEZONE",
        description="the time zone of `DIGEST_CRON` and of the digest's dates",
    )
    digest_lookback_days: int = Field(
        default=30,
        ge=1,
        le=3650,
        validation_alias="DIGEST_LOOKBACK_DAYS",
        description="how far back a review still counts as new",
    )
    digest_post_empty: bool = Field(
        default=False, validation_alias="DIGEST_POST_EMPTY", description='post a "no new cases" note for an empty week'
    )
    digest_lease_seconds: int = Field(
        default=600,
        ge=10,
        validation_alias="DIGEST_LEASE_SECONDS",
        description="how long a claimed digest period is held before another process may take over",
    )

    match_deadline_seconds: float = Field(
        default=2.0, gt=0, le=60, validation_alias="MATCH_DEADLINE_SECONDS", description="per-request matching deadline"
    )
    match_workers: int = Field(
        default=2, ge=1, le=64, validation_alias="MATCH_WORKERS", description="threads that match pastes at once"
    )
    match_queue: int = Field(
        default=6,
        ge=0,
        le=1000,
        validation_alias="MATCH_QUEUE",
        description=(
            "pastes that may wait for a matching thread; past that an explicit request is told to "
            "retry in a minute and an unprompted paste is dropped (`incident_bot_busy_total`)"
        ),
    )
    max_paste_bytes: int = Field(
        default=2 << 20,
        ge=1024,
        validation_alias="MAX_PASTE_BYTES",
        description="bytes of a paste that are matched (head and tail kept)",
    )
    max_file_bytes: int = Field(
        default=32 << 20,
        ge=1024,
        validation_alias="MAX_FILE_BYTES",
        description=(
            "a shared file up to this size is streamed whole (exact line numbers); a larger one is "
            "fetched by its first and last parts (HTTP ranges), so any size is matched by its head "
            "and tail"
        ),
    )
    library_api_url: str | None = Field(
        default=None,
        validation_alias="LIBRARY_API_URL",
        description="the incident library's API, for `incident-bot sync` and `/incident similar`",
    )
    library_sync_minutes: int = Field(
        default=0,
        ge=0,
        validation_alias="LIBRARY_SYNC_MINUTES",
        description="sync from `LIBRARY_API_URL` every N minutes inside the bot, then reload (0: off)",
    )
    cases_reload_seconds: int = Field(
        default=0,
        ge=0,
        validation_alias="CASES_RELOAD_SECONDS",
        description=(
            "check `CASES_DIR` every N seconds and reload changed cases (0: off; SIGHUP always "
            "reloads); confirmed examples stored by other replicas are picked up on the same interval"
            " (every 60 s when 0)"
        ),
    )
    example_retention_days: int = Field(
        default=90,
        ge=1,
        le=3650,
        validation_alias="EXAMPLE_RETENTION_DAYS",
        description=(
            "confirmed examples older than this are ignored and purged (see *Confirmed answers teach the matcher*)"
        ),
    )
    # Slack user ids (comma-separated) whose confirmation alone makes an example decisive.
    reviewers: str = Field(
        default="",
        validation_alias="REVIEWERS",
        description=(
            "Slack user ids and user-group ids (`S…`), comma-separated: who may record a review "
            "(`/incident review`) and list or delete confirmed examples (`/incident forget`; groups "
            "are read with `usergroups.users.list`); a confirmation from a listed user, or a member "
            "of a listed group, alone makes an example line count as proof (otherwise it takes two "
            "people; group members are re-read every `CASES_RELOAD_SECONDS`, at most every five "
            "minutes from Slack)"
        ),
    )
    node_memory_days: int = Field(
        default=14,
        ge=1,
        le=365,
        validation_alias="NODE_MEMORY_DAYS",
        description=(
            "a host that failed within this many days is named as a repeat offender in the next answer that names it"
        ),
    )
    node_retention_days: int = Field(
        default=90,
        ge=1,
        le=3650,
        validation_alias="NODE_RETENTION_DAYS",
        description="remembered hosts are deleted after this many days (at least `NODE_MEMORY_DAYS`)",
    )
    node_aliases: str = Field(
        default="",
        validation_alias="NODE_ALIASES",
        description=(
            "`name=canonical` pairs, comma-separated (`n7=gpu-b07,gpu-b07.dc1.example=gpu-b07`); "
            "names are compared as written, lower-case, then through these"
        ),
    )
    mcp_host: str = Field(
        default="127.0.0.1",
        validation_alias="MCP_HOST",
        description=(
            "where `incident-bot mcp --http` listens; anything but loopback needs `MCP_TOKEN` and `MCP_ALLOWED_HOSTS`"
        ),
    )
    mcp_port: int = Field(default=8765, ge=0, le=65535, validation_alias="MCP_PORT", description="its port")
    mcp_token: SecretStr | None = Field(
        default=None,
        validation_alias="MCP_TOKEN",
        description=(
            "the bearer token HTTP clients must send (`Authorization: Bearer …`); at least 16 "
            "characters on a public bind (`openssl rand -hex 16`)"
        ),
    )
    mcp_allowed_hosts: str = Field(
        default="",
        validation_alias="MCP_ALLOWED_HOSTS",
        description=(
            "`Host` values accepted besides loopback names (DNS-rebinding protection), "
            "comma-separated, `host:port` or `host:*`"
        ),
    )
    mcp_allowed_origins: str = Field(
        default="", validation_alias="MCP_ALLOWED_ORIGINS", description="browser origins accepted, comma-separated"
    )
    case_id_prefix: str = Field(
        default="LOC",
        min_length=1,
        max_length=10,
        pattern=r"^[A-Za-z]{1,10}$",
        validation_alias="CASE_ID_PREFIX",
        description=(
            "the id prefix `incident-bot cases draft export` gives a draft (`LOC-0001`, then the next free number)"
        ),
    )
    noise_window_minutes: int = Field(
        default=60,
        ge=0,
        validation_alias="NOISE_WINDOW_MINUTES",
        description="the same case is not auto-posted again in a channel within this window",
    )
    dedupe_ttl_seconds: int = Field(
        default=3600,
        ge=60,
        validation_alias="DEDUPE_TTL_SECONDS",
        description="how long Slack event ids are remembered",
    )
    # For tests only: the process starts its clock at this instant (ISO 8601 with an offset) and lets it
    # tick, so a subprocess runs date logic at the instant its test chose. Never set it in production.
    test_now: datetime | None = Field(
        default=None,
        validation_alias="INCIDENT_BOT_TEST_NOW",
        description=(
            "**tests only**: the process starts its clock at this instant (ISO 8601 with an offset) "
            "and lets it tick, so a test that starts the bot as a subprocess runs its date logic at "
            "the instant it chose; never set it in production (the bot logs a warning when it is set)"
        ),
    )

    @property
    def slack_enabled(self) -> bool:
        return self.slack_bot_token is not None

    @property
    def socket_mode(self) -> bool:
        return self.slack_app_token is not None

    @property
    def file_origins(self) -> frozenset[str]:
        """``SLACK_FILE_HOSTS`` as origins (``https://files.slack.com``): the only places the bot token goes
        to download a shared file."""
        return frozenset(part.strip().rstrip("/").lower() for part in self.slack_file_hosts.split(",") if part.strip())

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'incident-bot.sqlite3').as_posix()}"

    @model_validator(mode="before")
    @classmethod
    def _no_placeholders(cls, data: object) -> object:
        # Named, never echoed: the value may be a half-edited token.
        if isinstance(data, dict) and (names := placeholders(data)):
            raise ValueError(
                f"{', '.join(names)} {'holds' if len(names) == 1 else 'hold'} a placeholder from .env.example: "
                "set the real value, or delete the line (empty or absent means unset)"
            )
        return data

    @field_validator("slack_api_url", "library_api_url", "slurm_rest_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("slack_file_hosts")
    @classmethod
    def _origins(cls, value: str) -> str:
        for part in (p.strip() for p in value.split(",")):
            if part and (not part.startswith(("http://", "https://")) or "/" in part.split("://", 1)[1].rstrip("/")):
                raise ValueError(f"{part!r} must be an origin such as https://files.slack.com (scheme and host only)")
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        # slack_sdk joins the method name onto this URL: without the slash ".../api" + "chat.postMessage"
        # would become ".../chat.postMessage".
        return value if value.endswith("/") else value + "/"

    @field_validator("slack_bot_token")
    @classmethod
    def _bot_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(("xoxb-", "xoxe.xoxb-")):
            raise ValueError("must be a bot token (xoxb-...); an xapp- token goes in SLACK_APP_TOKEN")
        return value

    @field_validator("slack_app_token")
    @classmethod
    def _app_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            raise ValueError("must be an app-level token (xapp-...) with connections:write")
        return value

    @field_validator("test_now")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("must carry an offset (2027-01-07T03:00:00+00:00)")
        return value

    @field_validator("digest_channel")
    @classmethod
    def _channel_id(cls, value: str | None) -> str | None:
        if value is not None and not _CHANNEL_ID.fullmatch(value):
            # The runner reads the channel's history by id to never post a part twice; a #name fails there.
            raise ValueError("must be a channel id such as C0123456789, not a #name")
        return value

    @model_validator(mode="after")
    def _digest_schedule(self) -> Settings:
        try:
            zone = ZoneInfo(self.digest_timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"DIGEST_TIMEZONE {self.digest_timezone!r} is not an IANA time zone") from None
        try:
            CronTrigger.from_crontab(self.digest_cron, timezone=zone)
        except ValueError as exc:
            raise ValueError(f"DIGEST_CRON {self.digest_cron!r} is not a 5-field cron expression: {exc}") from None
        if not self.digest_channel and (self.digest_cron != _DEFAULT_CRON or self.digest_post_empty):
            raise ValueError("DIGEST_CRON or DIGEST_POST_EMPTY is set but DIGEST_CHANNEL is not: no digest would post")
        return self

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        serves = not self.socket_mode and not _POSTING_ONLY.get()
        if self.slack_bot_token is not None and serves and self.slack_signing_secret is None:
            raise ValueError("HTTP mode (SLACK_BOT_TOKEN without SLACK_APP_TOKEN) needs SLACK_SIGNING_SECRET")
        if self.slack_app_token is not None and self.slack_bot_token is None:
            raise ValueError("SLACK_APP_TOKEN (Socket Mode) also needs SLACK_BOT_TOKEN")
        if self.library_sync_minutes and not self.library_api_url:
            raise ValueError("LIBRARY_SYNC_MINUTES needs LIBRARY_API_URL")
        if self.database_url and not self.database_url.startswith(("sqlite:///", "postgresql://", "postgres://")):
            raise ValueError("DATABASE_URL must start with sqlite:/// or postgresql://")
        if self.slurm_rest_url and self.slurm_token_file is None:
            raise ValueError("SLURM_REST_URL needs SLURM_TOKEN_FILE (a file holding the JWT)")
        return self
