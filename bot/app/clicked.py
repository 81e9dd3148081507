"""Which reply a button click belongs to, and whether the click may act on it: the check every vote, pick
and "Save as an example" passes before anything is stored.

A value must unseal for where it was clicked (``bot.replies.seal``: the channel, and for an answer shown to
one person, that person), parse as one of ours, and name a logged reply whose best case it names (any case
for "It was …", which names a runner-up), clicked in that reply's channel or by the one person who saw it.
"""

from __future__ import annotations

from bot.replies.buttons import ButtonPayload, Click, parse_value
from bot.replies.seal import unseal
from bot.storage.base import ReplyRecord, Storage


def clicked_reply(
    click: Click, key: bytes, storage: Storage, *, any_case: bool = False
) -> tuple[ButtonPayload, ReplyRecord] | None:
    """The button value of ``click`` and the reply-log entry it belongs to, or None when the value is not
    one of ours, the reply is unknown, or the click does not fit it. Reads storage (may raise
    :class:`StorageError`)."""
    value = unseal(click.value, key, click.channel_id, click.user_id)
    payload = parse_value(value) if value is not None else None
    if payload is None:
        return None
    if payload.reply_id is not None:
        record = storage.get_reply(payload.reply_id)
    elif click.channel_id and click.message_ts and not click.ephemeral:
        record = storage.reply_for_message(click.channel_id, click.message_ts)
    else:
        record = None
    if record is None or record.id is None or (record.case_ids[:1] != (payload.case_id,) and not any_case):
        return None
    if record.channel not in {click.channel_id, click.user_id}:
        return None
    return payload, record
