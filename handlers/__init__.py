"""Slack listeners, one module per surface; :func:`register_all` wires them onto a Bolt app.

Order matters: the catch-all ``message`` listener (in ``messages``) must be registered after every other
listener that could match a message event.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.app.services import Services
from bot.ops.settings import Settings
from handlers import actions, alerts, commands, common, drafts, drain, home, mentions, messages, shortcuts


def register_all(app: AsyncApp, services: Services, settings: Settings) -> None:
    locales = common.LocaleCache()
    commands.register(app, services, locales)
    actions.register(app, services, locales)
    drafts.register(app, services)
    drain.register(app, services, settings.operators.split(","))
    alerts.register(app, services, settings.operators.split(","), settings.alertmanager_url)
    shortcuts.register(app, services, settings, locales)
    home.register(app, services, locales)
    mentions.register(app, services, settings, locales)
    messages.register(app, services, settings, locales)  # ends with the catch-all message listener
