"""The library client alone: every listing shape and next-page pointer, conditional case requests,
``similar``, and the retry policy (through ``httpx.MockTransport`` and the loopback fake)."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from library_server import LibraryServer

from bot.library.client import (
    CaseNotFound,
    Fetched,
    LibraryClient,
    LibraryResponseError,
    LibraryUnavailable,
    NotModified,
)

BASE = "https://library.test/api"
Handler = Callable[[httpx.Request], httpx.Response]


def client_with(handler: Handler, **kwargs: Any) -> tuple[LibraryClient, list[float]]:
    sleeps: list[float] = []
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return LibraryClient(BASE, http=http, sleep=sleeps.append, **kwargs), sleeps


def paged(first: Any, second: Any, *, on: Callable[[httpx.Request], bool]) -> Handler:
    """Answer ``second`` for the request that ``on`` recognises as the next page, else ``first``."""

    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/cases", request.url
        return httpx.Response(200, json=second if on(request) else first)

    return handle


def page(n: str) -> Callable[[httpx.Request], bool]:
    return lambda r: r.url.params.get("page") == n


def cursor(token: str) -> Callable[[httpx.Request], bool]:
    return lambda r: r.url.params.get("cursor") == token


A = {"id": "IL-0001", "updated_at": "2026-01-01T00:00:00Z"}
B = {"id": "IL-0002", "updated_at": "2026-02-01T00:00:00Z"}

SHAPES: dict[str, Handler] = {
    "array of summaries": paged([A, B], None, on=lambda _: False),
    "array of ids": paged(["IL-0001", "IL-0002"], None, on=lambda _: False),
    "cases + next (relative URL)": paged({"cases": [A], "next": "/api/cases?page=2"}, {"cases": [B]}, on=page("2")),
    "items + next_url (absolute)": paged(
        {"items": [A], "next_url": f"{BASE}/cases?page=2"}, {"items": [B], "next_url": None}, on=page("2")
    ),
    "results + next_page (number)": paged({"results": [A], "next_page": 2}, {"results": [B]}, on=page("2")),
    "data + next_page (digits)": paged({"data": [A], "next_page": "2"}, {"data": [B]}, on=page("2")),
    "links.next": paged({"cases": [A], "links": {"next": "?page=2"}}, {"cases": [B], "links": {}}, on=page("2")),
    "_links.next.href": paged(
        {"items": [A], "_links": {"next": {"href": "/api/cases?page=2"}}}, {"items": [B]}, on=page("2")
    ),
    "cursor": paged({"results": [A], "cursor": "abc"}, {"results": [B], "cursor": None}, on=cursor("abc")),
    "next_cursor": paged({"data": [A], "next_cursor": "xyz"}, {"data": [B], "next_cursor": ""}, on=cursor("xyz")),
    "next as a bare token": paged({"cases": [A], "next": "tok"}, {"cases": [B], "next": None}, on=cursor("tok")),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_listing_shape(shape: str) -> None:
    client, _ = client_with(SHAPES[shape])
    assert [ref.id for ref in client.list_cases()] == ["IL-0001", "IL-0002"]


def test_link_header_and_whole_cases() -> None:
    whole = {"id": "IL-0003", "title": {}, "summary": {}, "remediation": [], "root_cause": "x"}

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("page") == "2":
            return httpx.Response(200, json=[whole])
        return httpx.Response(200, json=[A], headers={"Link": f'<{BASE}/cases?page=2>; rel="next"'})

    client, _ = client_with(handle)
    refs = list(client.list_cases())
    assert [(r.id, r.is_whole_case) for r in refs] == [("IL-0001", False), ("IL-0003", True)]
    assert refs[0].updated_at == "2026-01-01T00:00:00Z" and refs[1].fields == whole


@pytest.mark.parametrize(
    "body",
    [
        {"cases": [A], "next_cursor": "again", "has_more": False},
        {"cases": [], "next": "/api/cases?page=9"},
        {"cases": [A], "next": f"{BASE}/cases"},  # points back at itself
    ],
)
def test_the_listing_ends_on_has_more_false_an_empty_page_or_a_pointer_already_followed(
    body: dict[str, Any],
) -> None:
    calls: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json=body)

    client, _ = client_with(handle)
    assert len(list(client.list_cases())) == len(body["cases"]) and len(calls) == 1


def test_a_cursor_echoed_back_ends_the_listing() -> None:
    calls: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(200, json={"cases": [A], "cursor": "same"})

    client, _ = client_with(handle)
    assert len(list(client.list_cases())) == 2 and len(calls) == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"total": 3}, "expected a JSON array or an object with one of cases, items, results, data"),
        ({"cases": [A], "next": "https://elsewhere.test/cases?page=2"}, "is on another server"),
        ({"cases": [A], "next": 2.5}, "unreadable next-page pointer"),
    ],
)
def test_listings_it_cannot_read_are_errors(body: Any, message: str) -> None:
    client, _ = client_with(lambda _: httpx.Response(200, json=body))
    with pytest.raises(LibraryResponseError, match=message):
        list(client.list_cases())


def test_a_listing_that_is_not_json_is_an_error() -> None:
    client, _ = client_with(lambda _: httpx.Response(200, text="<html>login</html>"))
    with pytest.raises(LibraryResponseError, match="not JSON"):
        list(client.list_cases())


def test_since_is_sent_and_enforced_when_the_server_ignores_it() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=[A, B, {"id": "IL-0009"}])

    client, _ = client_with(handle)
    assert [r.id for r in client.list_cases(since="2026-01-15")] == ["IL-0002", "IL-0009"]
    assert seen[0].url.params["since"] == "2026-01-15T00:00:00+00:00"
    with pytest.raises(ValueError, match="ISO date"):
        list(client.list_cases(since="yesterday"))


def test_entries_without_an_id_are_kept_for_the_caller_to_reject() -> None:
    client, _ = client_with(lambda _: httpx.Response(200, json=[{"title": "x"}, 7, " IL-0001 "]))
    assert [r.id for r in client.list_cases()] == ["", "", "IL-0001"]


# -- one case -----------------------------------------------------------------------------------------


def test_get_case_sends_validators_and_understands_304() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/cases/IL-0427"
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"ETag": '"v1"'})
        if request.headers.get("if-modified-since") == "Mon, 09 Nov 2026 11:55:48 GMT":
            return httpx.Response(304)
        body = {"id": "IL-0427"}
        return httpx.Response(
            200, json=body, headers={"ETag": '"v1"', "Last-Modified": "Mon, 09 Nov 2026 11:55:48 GMT"}
        )

    client, _ = client_with(handle)
    fetched = client.get_case("IL-0427")
    assert isinstance(fetched, Fetched) and fetched.json() == {"id": "IL-0427"}
    assert (fetched.etag, fetched.last_modified) == ('"v1"', "Mon, 09 Nov 2026 11:55:48 GMT")
    assert client.get_case("IL-0427", etag='"v1"') == NotModified("IL-0427", '"v1"', None)
    assert client.get_case("IL-0427", last_modified=fetched.last_modified) == NotModified(
        "IL-0427", None, "Mon, 09 Nov 2026 11:55:48 GMT"
    )


def test_get_case_errors() -> None:
    client, _ = client_with(lambda r: httpx.Response(404 if r.url.path.endswith("0404") else 403))
    with pytest.raises(CaseNotFound):
        client.get_case("IL-0404")
    with pytest.raises(LibraryResponseError, match="HTTP 403"):
        client.get_case("IL-0403")


# -- similar ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        ["IL-0002", "IL-0003"],
        {"similar": [{"id": "IL-0002", "score": 0.9}, {"id": "IL-0003", "score": 0.4}]},
        {"cases": [{"id": "IL-0002"}, {"id": "IL-0003"}]},
        {"results": ["IL-0002", "IL-0003"]},
    ],
)
def test_similar_accepts_ids_and_summaries(body: Any) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/cases/IL-0001/similar"
        return httpx.Response(200, json=body)

    client, _ = client_with(handle)
    assert [ref.id for ref in client.similar("IL-0001")] == ["IL-0002", "IL-0003"]


def test_similar_over_loopback_and_when_the_library_is_down() -> None:
    with LibraryServer() as server:
        server.put({"id": "IL-0001"})
        server.similar["IL-0001"] = [{"id": "IL-0427", "title": {"en": "ECC"}}]
        with LibraryClient(server.base_url, retries=0) as client:
            refs = client.similar("IL-0001")
            assert refs[0].id == "IL-0427" and refs[0].fields["title"] == {"en": "ECC"}
            with pytest.raises(CaseNotFound):
                client.similar("IL-0404")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps: list[float] = []
    with (
        LibraryClient(f"http://127.0.0.1:{port}", retries=2, sleep=sleeps.append) as client,
        pytest.raises(LibraryUnavailable, match=r"connection failed .*\(3 attempts\)"),
    ):
        client.similar("IL-0001")
    assert sleeps == [0.5, 1.0]


# -- retries ------------------------------------------------------------------------------------------


def test_retries_back_off_exponentially_with_a_cap_then_give_up() -> None:
    statuses: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        statuses.append(502)
        return httpx.Response(502)

    client, sleeps = client_with(handle, retries=4, backoff=1.0, max_backoff=3.0)
    with pytest.raises(LibraryUnavailable, match=r"HTTP 502 \(5 attempts\)"):
        client.get_case("IL-0001")
    assert sleeps == [1.0, 2.0, 3.0, 3.0] and len(statuses) == 5


def test_retry_after_is_honoured_and_4xx_is_not_retried() -> None:
    answers = [httpx.Response(503, headers={"Retry-After": "2"}), httpx.Response(429), httpx.Response(200, json=[])]

    def handle(request: httpx.Request) -> httpx.Response:
        return answers.pop(0)

    client, sleeps = client_with(handle, backoff=0.25)
    assert list(client.list_cases()) == []
    assert sleeps == [2.0, 0.5]

    calls: list[int] = []

    def bad_request(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(400)

    client, sleeps = client_with(bad_request)
    with pytest.raises(LibraryResponseError, match="HTTP 400"):
        list(client.list_cases())
    assert calls == [1] and sleeps == []


def test_transport_errors_are_retried() -> None:
    attempts: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        if len(attempts) == 1:
            raise httpx.ConnectError("refused", request=request)
        if len(attempts) == 2:
            raise httpx.ReadTimeout("slow", request=request)
        return httpx.Response(200, json={"id": "IL-0001"})

    client, sleeps = client_with(handle)
    assert isinstance(client.get_case("IL-0001"), Fetched) and sleeps == [0.5, 1.0]


def test_constructor_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="http:// or https://"):
        LibraryClient("library.test")
    with pytest.raises(ValueError, match="timeout"):
        LibraryClient(BASE, timeout=0)
    assert LibraryClient(BASE + "/").case_url("IL 1/x") == f"{BASE}/cases/IL%201%2Fx"


def test_body_size_is_capped() -> None:
    body = json.dumps({"id": "x" * 100}).encode()
    client, _ = client_with(lambda _: httpx.Response(200, content=body), max_body_bytes=64)
    with pytest.raises(LibraryResponseError, match="larger than 64 bytes"):
        client.get_case("IL-0001")
