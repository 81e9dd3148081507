"""The one typed ``Settings`` object: built once at the entry point from the environment and ``.env``.

Secrets are ``SecretStr`` so they never print. Inconsistent combinations fail at start-up with a message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

BUNDLED_CASES = Path(__file__).resolve().parent.parent / "cases"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True)

    cases_dir: Path = Field(default=BUNDLED_CASES, validation_alias="CASES_DIR")
    data_dir: Path = Field(default=Path("data"), validation_alias="DATA_DIR")
    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")

    slack_bot_token: SecretStr | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr | None = Field(default=None, validation_alias="SLACK_SIGNING_SECRET")
    slack_app_token: SecretStr | None = Field(default=None, validation_alias="SLACK_APP_TOKEN")
    slack_api_url: str = Field(default="https://slack.com/api/", validation_alias="SLACK_API_URL")
    port: int = Field(default=3000, ge=0, le=65535, validation_alias="PORT")
    host: str = Field(default="0.0.0.0", validation_alias="HOST")  # noqa: S104 - a server listens on all interfaces
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(default="INFO", validation_alias="LOG_LEVEL")
    log_format: Literal["auto", "json", "console"] = Field(default="auto", validation_alias="LOG_FORMAT")

    digest_channel: str | None = Field(default=None, validation_alias="DIGEST_CHANNEL")
    digest_cron: str = Field(default="0 9 * * mon", validation_alias="DIGEST_CRON")
    digest_timezone: str = Field(default="Asia/Seoul", validation_alias="DIGEST_TIMEZONE")
    digest_lookback_days: int = Field(default=30, ge=1, le=3650, validation_alias="DIGEST_LOOKBACK_DAYS")
    digest_post_empty: bool = Field(default=False, validation_alias="DIGEST_POST_EMPTY")
    digest_lease_seconds: int = Field(default=600, ge=10, validation_alias="DIGEST_LEASE_SECONDS")

    match_deadline_seconds: float = Field(default=2.0, gt=0, le=60, validation_alias="MATCH_DEADLINE_SECONDS")
    max_paste_bytes: int = Field(default=2 << 20, ge=1024, validation_alias="MAX_PASTE_BYTES")
    max_file_bytes: int = Field(default=10 << 20, ge=1024, validation_alias="MAX_FILE_BYTES")
    library_api_url: str | None = Field(default=None, validation_alias="LIBRARY_API_URL")
    library_sync_minutes: int = Field(default=0, ge=0, validation_alias="LIBRARY_SYNC_MINUTES")
    cases_reload_seconds: int = Field(default=0, ge=0, validation_alias="CASES_RELOAD_SECONDS")
    noise_window_minutes: int = Field(default=60, ge=0, validation_alias="NOISE_WINDOW_MINUTES")
    dedupe_ttl_seconds: int = Field(default=3600, ge=60, validation_alias="DEDUPE_TTL_SECONDS")

    @property
    def slack_enabled(self) -> bool:
        return self.slack_bot_token is not None

    @property
    def socket_mode(self) -> bool:
        return self.slack_app_token is not None

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'incident-bot.sqlite3').as_posix()}"

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.slack_bot_token is not None and not self.socket_mode and self.slack_signing_secret is None:
            raise ValueError("HTTP mode (SLACK_BOT_TOKEN without SLACK_APP_TOKEN) needs SLACK_SIGNING_SECRET")
        if self.slack_app_token is not None and self.slack_bot_token is None:
            raise ValueError("SLACK_APP_TOKEN (Socket Mode) also needs SLACK_BOT_TOKEN")
        if self.library_sync_minutes and not self.library_api_url:
            raise ValueError("LIBRARY_SYNC_MINUTES needs LIBRARY_API_URL")
        if self.database_url and not self.database_url.startswith(("sqlite:///", "postgresql://", "postgres://")):
            raise ValueError("DATABASE_URL must start with sqlite:/// or postgresql://")
        return self
