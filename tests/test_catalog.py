"""The one catalog of user-facing texts (``bot.replies.catalog``): every key in both languages with the
same placeholders, the Korean in the glossary's terms with particles attached, and the .po export that
translators' tools read gives back exactly the table."""

from __future__ import annotations

import re
import string
import sys
from pathlib import Path

import pytest

from bot.library.review import DETACHED_PARTICLE, _slips, glossary
from bot.replies.catalog import CATALOG, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import export_po  # noqa: E402

KEYS = sorted(CATALOG)


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", KEYS)
def test_every_key_has_both_languages_with_the_same_placeholders(key: str) -> None:
    entry = CATALOG[key]
    assert set(entry) == {"en", "ko"} and entry["en"].strip() and entry["ko"].strip()
    assert _fields(entry["en"]) == _fields(entry["ko"]), key


def test_the_korean_keeps_the_glossary_terms_and_attaches_particles() -> None:
    slips = [
        (key, variant)
        for key in KEYS
        for term in glossary()
        for variant in term.avoid
        if _slips(CATALOG[key]["ko"], variant, term.fine_in)
    ]
    assert slips == []
    assert [key for key in KEYS if DETACHED_PARTICLE.search(CATALOG[key]["ko"])] == []


def test_the_korean_is_korean() -> None:
    """Every Korean entry has Hangul, except names and commands that are the same in both languages, and
    the language switch, which names the language it switches to ("English first" for a Korean reader)."""
    same = {key for key in KEYS if CATALOG[key]["ko"] == CATALOG[key]["en"]}
    hangul = re.compile(r"[\uac00-\ud7a3]")
    assert [key for key in KEYS if key not in same | {"switch"} and not hangul.search(CATALOG[key]["ko"])] == []
    assert same <= {"home.title", "lang.en.en", "lang.ko.en", "lang.en.ko", "lang.ko.ko"} | {
        key for key in same if key.startswith("msg.") and "usage" in key
    }


def test_text_fills_placeholders_and_an_unknown_key_is_a_bug() -> None:
    assert text("line", "ko", n=3) == "3번째 줄"
    with pytest.raises(KeyError):
        text("no.such.key", "en")


def test_the_po_export_reads_back_as_the_catalog() -> None:
    read = export_po.read(export_po.export())
    assert read == {key: (entry["en"], entry["ko"]) for key, entry in CATALOG.items()}
    assert "\n\n" in CATALOG["msg.help"]["en"] or "\n" in CATALOG["msg.help"]["en"]  # multi-line entries survive
