"""The settings for the site's scheduler and the actions operators take on nodes, as a base of
:class:`bot.ops.settings.Settings` (kept apart to keep each module small; the docs list them with the rest)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, SecretStr


class SchedulerSettings(BaseModel):
    slurm_cli: bool = Field(
        default=False,
        validation_alias="SLURM_CLI",
        description="read node state with Slurm's client commands on this host (sinfo, squeue, sacct; needs munge)",
    )
    slurm_bin_dir: str | None = Field(
        default=None, validation_alias="SLURM_BIN_DIR", description="where sinfo, squeue and sacct are (else PATH)"
    )
    slurm_rest_url: str | None = Field(
        default=None,
        validation_alias="SLURM_REST_URL",
        description="slurmrestd's URL (openapi/v0.0.38); preferred over `SLURM_CLI` for reading when both are set",
    )
    slurm_rest_user: str = Field(
        default="incident-bot", validation_alias="SLURM_REST_USER", description="the Slurm user the token is for"
    )
    slurm_token_file: Path | None = Field(
        default=None,
        validation_alias="SLURM_TOKEN_FILE",
        description="a file holding the JWT for slurmrestd, re-read when it changes (`scontrol token`)",
    )
    scheduler_timeout_seconds: float = Field(
        default=1.5,
        gt=0,
        le=10,
        validation_alias="SCHEDULER_TIMEOUT_SECONDS",
        description="how long a reply's node line waits for the scheduler before it says 'not reachable'",
    )
    operators: str = Field(
        default="",
        validation_alias="OPERATORS",
        description="Slack user and user-group ids, comma-separated: who may drain and resume nodes from a reply",
    )
    drain_limit_per_hour: int = Field(
        default=3,
        ge=0,
        le=1000,
        validation_alias="DRAIN_LIMIT_PER_HOUR",
        description="drains in an hour, workspace-wide, past which a second operator must approve (15 minutes)",
    )
    dry_run_actions: bool = Field(
        default=False, validation_alias="DRY_RUN_ACTIONS", description="show and record what a drain would run"
    )
    slurm_run_as: str | None = Field(
        default=None,
        validation_alias="SLURM_RUN_AS",
        description="run scontrol as this user (the bot must be root to switch; else run the bot as it)",
    )
    alert_channel: str | None = Field(
        default=None,
        validation_alias="ALERT_CHANNEL",
        description="the channel id alerts from Alertmanager are answered in (`POST /alertmanager`; off when unset)",
    )
    alert_routes: str = Field(
        default="",
        validation_alias="ALERT_ROUTES",
        description="`label=value:CHANNEL` pairs, comma-separated: an alert with that label goes there instead",
    )
    alertmanager_token: SecretStr | None = Field(
        default=None,
        validation_alias="ALERTMANAGER_TOKEN",
        description="the bearer token Alertmanager sends (its `http_config.authorization.credentials_file`)",
    )
    alertmanager_user: str | None = Field(
        default=None, validation_alias="ALERTMANAGER_USER", description="basic auth instead of a token: the user"
    )
    alertmanager_password: SecretStr | None = Field(
        default=None,
        validation_alias="ALERTMANAGER_PASSWORD",
        description="basic auth instead of a token: the password",
    )
    alertmanager_url: str | None = Field(
        default=None,
        validation_alias="ALERTMANAGER_URL",
        description="Alertmanager's URL, for the Silence button (API v2 `POST /api/v2/silences`)",
    )
