"""Fixed messages of the slash command in both languages: help, usage lines and confirmations. Pure.

Each message is shown in the reader's language, with the other language under it in smaller type
(``bot.replies.render.bilingual_reply``)."""

from __future__ import annotations

from bot.model.case import LANGS, Lang
from bot.replies.catalog import CATALOG, text

HELP: dict[Lang, str] = {lang: CATALOG["msg.help"][lang] for lang in LANGS}


def message(key: str, lang: Lang, **values: str) -> str:
    """The fixed message ``key`` in ``lang`` with ``values`` filled. KeyError for an unknown key (a bug)."""
    return text(f"msg.{key}", lang, **values)
