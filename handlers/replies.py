"""Sending a rendered ``Reply`` through a ``response_url`` the same way from every handler."""

from __future__ import annotations

from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.model.results import Reply


async def send_via_response_url(
    respond: AsyncRespond, reply: Reply, *, in_channel: bool = False, replace: bool = False
) -> None:
    """Post ``reply`` ephemerally (or for everyone with ``in_channel``), replacing the clicked message
    with ``replace``. Links never unfurl: a paste's URLs stay text."""
    await respond(
        text=reply.text,
        blocks=reply.blocks,
        response_type="in_channel" if in_channel else "ephemeral",
        replace_original=replace,
        unfurl_links=False,
        unfurl_media=False,
    )
