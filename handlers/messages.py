"""``message`` events: pasted errors in channels (answered in the thread when the matcher decides to),
logs shared as files or snippets, and direct messages (always answered, like ``/incident``).

Ignored: other bots (``bot_id``), our own posts, edits, deletions and housekeeping subtypes. A catch-all
``message`` listener is registered last so every other message event gets 200, not Bolt's 404 (which
Slack would retry). Messages that mention the bot are answered on the ``app_mention`` path; the dedupe
middleware in ``bot.slack.app`` drops their ``message`` copy.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.nodes import Where
from bot.app.services import Services
from bot.model.excerpt import Excerpt
from bot.model.results import Reply
from bot.ops.settings import Settings
from bot.replies.catalog import both_langs
from bot.replies.render import message_reply
from handlers.common import LocaleCache, busy_reply, matched, user_langs
from handlers.files import FileDownloadError, download_file, download_url, is_text_file
from handlers.nodeline import follow
from handlers.text import visible_text

log = logging.getLogger(__name__)

HANDLED_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
_MAX_FILES = 3


@dataclass(frozen=True)
class Paste:
    """What to match from one message: Slack-encoded message text, or the head and tail of a shared file.
    ``error`` says why a shared file could not be used (shown only on explicit requests)."""

    data: str | Excerpt
    slack_encoded: bool
    error: str | None = None


def is_ignored(event: Mapping[str, Any], bot_user_id: str | None) -> bool:
    """Bots, our own posts, edits, deletions and other subtypes are never answered."""
    if event.get("subtype") not in HANDLED_SUBTYPES or event.get("hidden"):
        return True
    if event.get("bot_id") or event.get("bot_profile"):
        return True
    user = event.get("user")
    # Slackbot's own notices (in the bot's DM too) carry no bot_id but the user USLACKBOT.
    return not user or user == "USLACKBOT" or (bot_user_id is not None and user == bot_user_id)


# Said before the reader's language is known: both languages.
NOT_TEXT = both_langs("paste.not_text")
EXTERNAL = both_langs("paste.external")


async def paste_from_message(message: Mapping[str, Any], client: AsyncWebClient, settings: Settings) -> Paste | None:
    """The first text-like shared file of ``message`` (its head and tail), else its visible text.

    None when there is nothing to match. A file that cannot be used falls back to the text, with the
    reason in ``error``. A file entry that carries only its id (Slack Connect's ``check_file_info``, the
    file on an ``app_mention``) is completed with ``files.info`` before anything is decided about it.
    """
    text = visible_text(message)
    error: str | None = None
    files = [f for f in (message.get("files") or [])[:_MAX_FILES] if isinstance(f, dict)]
    for listed in files:
        try:
            file = await _complete(listed, client)
        except SlackApiError as problem:
            log.info("files.info failed for a shared file: %s", problem.response.get("error"))
            error = both_langs("paste.lookup_failed")
            continue
        if file.get("is_external"):
            error = error or EXTERNAL
            continue
        if not is_text_file(file):
            error = error or NOT_TEXT
            continue
        try:
            data = await _download(file, client, settings)
        except FileDownloadError as problem:
            log.info("shared file %s not used: %s", file.get("id"), problem)
            error = str(problem)
            continue
        return Paste(data, slack_encoded=False)
    if text.strip():
        return Paste(text, slack_encoded=True, error=error)
    return Paste("", slack_encoded=True, error=error) if error else None


def _is_stub(file: Mapping[str, Any]) -> bool:
    return file.get("file_access") == "check_file_info" or not (
        file.get("mimetype") or file.get("filetype") or file.get("url_private")
    )


async def _complete(file: dict[str, Any], client: AsyncWebClient) -> dict[str, Any]:
    if not _is_stub(file) or not file.get("id"):
        return file
    info = await client.files_info(file=str(file["id"]))
    return {**file, **(info.get("file") or {})}


async def _download(file: dict[str, Any], client: AsyncWebClient, settings: Settings) -> Excerpt:
    url = download_url(file)
    if url is None:
        raise FileDownloadError("The shared file has no download URL.")
    size = file.get("size")
    return await download_file(
        url,
        client.token or "",
        settings.max_paste_bytes,
        max_file_bytes=settings.max_file_bytes,
        allowed_origins=settings.file_origins,
        declared_size=int(size) if isinstance(size, int) else None,
    )


async def post_reply(
    services: Services,
    client: AsyncWebClient,
    *,
    channel: str,
    thread_ts: str | None,
    answered_ts: str,
    reply: Reply,
    source: str,
) -> None:
    """Post ``reply`` (in ``thread_ts`` when given) and log it. Never ``link_names``/``parse``: escaped
    user text stays inert."""
    reply = services.feedback.seal(reply, channel, None)  # a posted answer's buttons: for this channel only
    response = await client.chat_postMessage(
        channel=channel,
        thread_ts=thread_ts,
        text=reply.text,
        blocks=reply.blocks,
        unfurl_links=False,
        unfurl_media=False,
    )
    posted_ts = str(response.get("ts") or "")
    follow(services, client, channel, posted_ts, reply, thread_ts or "")  # the nodes' state, added after posting
    await services.pools.io(services.incident.record_reply, channel, posted_ts, answered_ts, reply, source)


def register(app: AsyncApp, services: Services, settings: Settings, locales: LocaleCache) -> None:
    # Not app.message(): its keyword middleware skips messages with empty text, i.e. most file shares.
    @app.event({"type": "message", "subtype": (None, "file_share", "thread_broadcast", "bot_message")})
    async def on_message(event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient) -> None:
        if is_ignored(event, context.bot_user_id):
            return
        channel = str(event["channel"])
        user_id = str(event["user"])
        paste = await paste_from_message(event, client, settings)
        if event.get("channel_type") == "im":
            await _answer_dm(event, paste, client, user_id, channel)
            return
        if paste is None or not paste.data:
            return
        result = await matched(services, False, services.incident.match, paste.data, slack_encoded=paste.slack_encoded)
        where = Where(channel, str(event["ts"]))
        if result is None or not await services.pools.io(services.incident.should_auto_reply, channel, result, where):
            return
        langs = await user_langs(services, locales, client, user_id)
        render = services.feedback.render_interactive
        reply = await services.pools.io(render, result, langs, explicit=False, where=where)
        await post_reply(
            services,
            client,
            channel=channel,
            thread_ts=event.get("thread_ts") or event["ts"],
            answered_ts=str(event["ts"]),
            reply=reply,
            source="auto",
        )

    async def _answer_dm(
        event: dict[str, Any], paste: Paste | None, client: AsyncWebClient, user_id: str, channel: str
    ) -> None:
        """A DM is an explicit request: text is handled like ``/incident <text>``, a file is matched."""
        langs = await user_langs(services, locales, client, user_id)
        if paste is None:
            reply = await services.pools.io(services.incident.command, "help", user_id=user_id, langs=langs)
        elif not paste.data:
            reply = message_reply(paste.error or both_langs("paste.nothing"))
        elif isinstance(paste.data, Excerpt):
            result = await matched(services, True, services.incident.match, paste.data, slack_encoded=False)
            where = Where(channel, str(event["ts"]))
            render = services.feedback.render_interactive
            if result is None:
                reply = busy_reply(langs)
            else:
                reply = await services.pools.io(render, result, langs, explicit=True, where=where)
        else:
            got = await matched(
                services,
                True,
                services.feedback.answer,
                paste.data,
                user_id=user_id,
                channel_id=channel,
                langs=langs,
                where=Where(channel, str(event["ts"])),
            )
            reply = got[0] if got is not None else busy_reply(langs)
            if paste.error and reply.tier is None and services.feedback.is_paste(paste.data):
                # A file that can't be matched (an image) and a comment that matches nothing: say why.
                reply = message_reply(paste.error)
        await post_reply(
            services,
            client,
            channel=channel,
            thread_ts=event.get("thread_ts"),
            answered_ts=str(event["ts"]),
            reply=reply,
            source="dm",
        )

    @app.event("message")
    async def ignore_other_messages() -> None:
        """Registered last: edits, deletions, joins and the like get 200 so Slack does not retry them."""
