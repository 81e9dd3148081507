"""Labels of the full case, the first reply, buttons, App Home and the digest: views of the one catalog
(``bot.replies.catalog``). Pure."""

from __future__ import annotations

from bot.model.case import Lang
from bot.replies.catalog import CATALOG


def label(key: str, lang: Lang) -> str:
    """The label for ``key`` in ``lang``. Raises KeyError for an unknown key (a bug, not user input)."""
    return CATALOG[key][lang]


def tier_text(tier: str, lang: Lang) -> str:
    """How sure a match of ``tier`` (exact, strong, weak) is, in ``lang``."""
    return CATALOG[f"tier.{tier}"][lang]


def is_tier(tier: str) -> bool:
    return f"tier.{tier}" in CATALOG


def lang_name(lang: Lang, reader: Lang) -> str:
    """The language ``lang`` named in the ``reader``'s language."""
    return CATALOG[f"lang.{reader}.{lang}"][reader]
