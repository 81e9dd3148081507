"""``/incident search``: the expected top results for the words people type. A contract: any later change
to search keeps these (add to them, do not loosen them)."""

from __future__ import annotations

import pytest

from bot.app.search import CaseSearch
from bot.library.case_store import load_library
from bot.ops.settings import BUNDLED_CASES

SEARCH = CaseSearch.build(load_library(BUNDLED_CASES).cases.values())

# words -> (cases that must come first, in any order; how many places they may take)
CONTRACT: dict[str, tuple[set[str], int]] = {
    "ecc": ({"IL-0414", "IL-0427"}, 2),
    "ecc node": ({"IL-0414", "IL-0427"}, 4),  # beside the node-isolation cases (IL-0421, PUB-0007)
    "nccl": ({"PUB-0003"}, 1),
    "nccl bootstrap": ({"PUB-0016"}, 1),
    "timeout": ({"PUB-0003", "PUB-0017"}, 2),
    "shm": ({"PUB-0009"}, 1),
    "quota": ({"PUB-0027"}, 1),
    "xid 79": ({"IL-0415"}, 1),
    "infiniband": ({"IL-0238"}, 1),
    "link flap": ({"IL-0238", "PUB-0019"}, 2),
    "oom": ({"PUB-0011"}, 1),
    "rendezvous": ({"PUB-0017"}, 1),
    "gsp": ({"IL-0415"}, 1),
    "il-427": ({"IL-0427"}, 1),
    "공유 메모리": ({"PUB-0009"}, 1),
    "동기화": ({"PUB-0018"}, 1),
    "메모리": ({"IL-0414"}, 3),
}


@pytest.mark.parametrize("words", list(CONTRACT))
def test_expected_cases_come_first(words: str) -> None:
    expected, places = CONTRACT[words]
    found = SEARCH.search(words, limit=8)
    assert expected <= set(found[:places]), found


def test_words_that_no_case_has_find_nothing() -> None:
    assert SEARCH.search("frobnicate-quuxer zzqx") == []  # (kubectl is a word of PUB-0032 now)
    assert SEARCH.search("") == []
