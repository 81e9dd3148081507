"""What the transports (Slack, the console, the MCP server) are handed: the use cases, composed once."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.app.feedback import FeedbackService
from bot.app.service import IncidentService
from bot.app.workers import WorkerPools


@dataclass(frozen=True)
class Services:
    """``incident`` answers commands and pastes; ``feedback`` adds the buttons and what their clicks do;
    ``pools`` run their blocking work (matching apart from storage, so acks never wait behind a match)."""

    incident: IncidentService
    feedback: FeedbackService
    pools: WorkerPools = field(default_factory=WorkerPools)

    @classmethod
    def around(
        cls, incident: IncidentService, pools: WorkerPools | None = None, button_key: bytes | None = None
    ) -> Services:
        return cls(incident=incident, feedback=FeedbackService(incident, button_key), pools=pools or WorkerPools())
