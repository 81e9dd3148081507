"""Slack listeners, one module per surface; :func:`register_all` wires them onto a Bolt app.

Order matters: the catch-all ``message`` listener (in ``messages``) must be registered after every other
listener that could match a message event.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.app.service import IncidentService
from bot.ops.settings import Settings
from handlers import actions, commands, home, mentions, messages, shortcuts


def register_all(app: AsyncApp, service: IncidentService, settings: Settings) -> None:
    locales = commands.LocaleCache()
    commands.register(app, service, locales)
    actions.register(app, service, locales)
    shortcuts.register(app, service, settings, locales)
    home.register(app, service, locales)
    mentions.register(app, service, settings, locales)
    messages.register(app, service, settings, locales)  # ends with the catch-all message listener
