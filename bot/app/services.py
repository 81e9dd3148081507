"""What the transports (Slack, the console, the MCP server) are handed: the use cases, composed once."""

from __future__ import annotations

from dataclasses import dataclass

from bot.app.feedback import FeedbackService
from bot.app.service import IncidentService


@dataclass(frozen=True)
class Services:
    """``incident`` answers commands and pastes; ``feedback`` adds the buttons and what their clicks do."""

    incident: IncidentService
    feedback: FeedbackService

    @classmethod
    def around(cls, incident: IncidentService) -> Services:
        return cls(incident=incident, feedback=FeedbackService(incident))
