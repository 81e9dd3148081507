"""The one place that knows the incident library's HTTP API: listing, one case, and a case's similar cases.

Assumptions (the listing format is not documented; everything below is what this client accepts):

- ``GET {base}/cases/{id}`` returns one case as JSON (the shape of a file in ``cases/``), with ``ETag``
  and/or ``Last-Modified``; it honours ``If-None-Match`` / ``If-Modified-Since`` with ``304``.
- ``GET {base}/cases/{id}/similar`` returns a JSON array of ids or of objects with an ``id``, or an object
  holding that array under ``similar``, ``cases``, ``items``, ``results`` or ``data``.
- ``GET {base}/cases[?since=DATE]`` is the listing. A page is either a JSON array, or an object holding the
  array under ``cases``, ``items``, ``results`` or ``data`` (first present wins). Array entries are case
  ids (strings), summaries (``{"id", "updated_at", …}``) or whole cases. An entry counts as a whole case
  only when it carries ``title``, ``summary``, ``remediation`` and ``root_cause``; a summary's case is
  fetched with ``GET /cases/{id}``.
- The next page comes from the first of ``next``, ``next_url``, ``next_page``, ``links.next``,
  ``_links.next.href``, ``cursor``, ``next_cursor``, else an RFC 8288 ``Link: <…>; rel="next"`` header.
  A value that looks like a URL or a path (``http…``, ``/…``, ``?…``) is followed (same origin only); an
  integer (or digits under ``next_page``) becomes ``page=N``; any other string is a cursor sent as
  ``cursor=…`` along with the first request's parameters. ``has_more: false``, an empty page, a pointer
  already followed, or ``null`` ends the listing.
- ``since`` is sent as ``?since=…``; entries whose ``updated_at`` is known and earlier are also dropped
  here, in case the server ignores the parameter.

Every request has a timeout. Connection errors, timeouts, ``5xx`` and ``429`` are retried at most
``retries`` times, sleeping ``backoff * 2**attempt`` seconds (at least ``Retry-After``, at most
``max_backoff``) through an injectable ``sleep``; then :class:`LibraryUnavailable` is raised.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from bot.model.case import parse_timestamp

LIST_KEYS = ("cases", "items", "results", "data")
SIMILAR_KEYS = ("similar", *LIST_KEYS)
_WHOLE_CASE_KEYS = frozenset({"title", "summary", "remediation", "root_cause"})
MAX_BODY_BYTES = 32 << 20
MAX_PAGES = 10_000
USER_AGENT = "incident-bot/0.1 (+library sync)"


class LibraryError(Exception):
    """Anything that went wrong talking to the library. Catch this to fall back to local data."""


class LibraryUnavailable(LibraryError):
    """The library could not be reached: connection errors, timeouts or 5xx, after every retry."""


class LibraryResponseError(LibraryError):
    """The library answered, but not with something this client understands (4xx, bad JSON, too big)."""


class CaseNotFound(LibraryError):
    """The library answered 404 for a case."""


@dataclass(frozen=True, slots=True)
class CaseRef:
    """One entry of a listing or of a similar-cases answer. ``id`` is ``""`` when the entry had none;
    ``fields`` is everything the entry said (the whole case when the listing serves whole cases)."""

    id: str
    updated_at: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_whole_case(self) -> bool:
        return self.fields.keys() >= _WHOLE_CASE_KEYS


@dataclass(frozen=True, slots=True)
class Fetched:
    """A case as served: the raw JSON bytes and the validators to send next time."""

    case_id: str
    body: bytes
    etag: str | None = None
    last_modified: str | None = None

    def json(self) -> Any:
        """The parsed body; raises ``ValueError`` when it is not JSON."""
        return json.loads(self.body)


@dataclass(frozen=True, slots=True)
class NotModified:
    """The library answered 304: the copy we hold is current. Validators as refreshed by the 304."""

    case_id: str
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class _Response:
    status: int
    headers: httpx.Headers
    body: bytes
    url: httpx.URL
    links: dict[str | None, dict[str, str]]


class LibraryClient:
    """A synchronous client for the library API. Close it (or use ``with``) when it made its own
    ``httpx.Client``; a client passed in as ``http`` is left open for its owner."""

    def __init__(
        self,
        base_url: str,
        *,
        http: httpx.Client | None = None,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_body_bytes: int = MAX_BODY_BYTES,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"library API URL must start with http:// or https://, got {base_url!r}")
        if retries < 0 or timeout <= 0 or backoff < 0:
            raise ValueError("retries and backoff must be >= 0 and timeout > 0")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_body_bytes = max_body_bytes
        self._sleep = sleep
        self._owns_http = http is None
        self._http = http or httpx.Client(follow_redirects=True, headers={"User-Agent": USER_AGENT})

    def __enter__(self) -> LibraryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    # -- endpoints ----------------------------------------------------------------------------------

    def case_url(self, case_id: str) -> str:
        return f"{self.base_url}/cases/{quote(case_id, safe='')}"

    def list_cases(self, since: datetime | str | None = None) -> Iterator[CaseRef]:
        """Every entry of the listing, page by page, in the server's order (duplicates included).

        Raises :class:`LibraryUnavailable` or :class:`LibraryResponseError` for a page that fails; entries
        already yielded stay valid.
        """
        cutoff = parse_timestamp(since) if isinstance(since, str) else since
        if isinstance(since, str) and cutoff is None:
            raise ValueError(f"since must be an ISO date or datetime, got {since!r}")
        first_params: dict[str, str] = {"since": cutoff.isoformat()} if cutoff else {}
        url: str = f"{self.base_url}/cases"
        params: dict[str, str] = dict(first_params)
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            seen.add(str(httpx.URL(url).copy_merge_params(params)))
            response = self._get(url, params=params)
            if response.status != 200:
                raise LibraryResponseError(f"GET {response.url}: HTTP {response.status}")
            page = _json(response)
            items = _page_items(page, LIST_KEYS, response.url)
            for item in items:
                ref = _ref(item)
                if cutoff and ref.updated_at:
                    stamp = parse_timestamp(ref.updated_at)
                    if stamp is not None and stamp < cutoff:
                        continue
                yield ref
            if not items:
                return
            following = self._next_request(page, response, first_params)
            if following is None:
                return
            url, params = following
            if str(httpx.URL(url).copy_merge_params(params)) in seen:
                return  # a pointer back to a page already read (or a cursor echoed back): the listing ended
        raise LibraryResponseError(f"the listing did not end after {MAX_PAGES} pages")

    def get_case(
        self, case_id: str, etag: str | None = None, last_modified: str | None = None
    ) -> Fetched | NotModified:
        """``GET /cases/{id}``, conditional when validators are given. Raises :class:`CaseNotFound` on 404,
        :class:`LibraryUnavailable` when unreachable, :class:`LibraryResponseError` on other answers."""
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        response = self._get(self.case_url(case_id), headers=headers)
        if response.status == 304:
            return NotModified(
                case_id,
                response.headers.get("etag") or etag,
                response.headers.get("last-modified") or last_modified,
            )
        if response.status == 404:
            raise CaseNotFound(f"the library has no case {case_id}")
        if response.status != 200:
            raise LibraryResponseError(f"GET {response.url}: HTTP {response.status}")
        return Fetched(case_id, response.body, response.headers.get("etag"), response.headers.get("last-modified"))

    def similar(self, case_id: str) -> list[CaseRef]:
        """The library's own similar cases for ``case_id``, best first as served.

        Raises :class:`LibraryUnavailable` when the API cannot be reached (the caller falls back to local
        similarity), :class:`CaseNotFound` on 404, :class:`LibraryResponseError` on an answer it cannot read.
        """
        response = self._get(f"{self.case_url(case_id)}/similar")
        if response.status == 404:
            raise CaseNotFound(f"the library has no case {case_id}")
        if response.status != 200:
            raise LibraryResponseError(f"GET {response.url}: HTTP {response.status}")
        return [_ref(item) for item in _page_items(_json(response), SIMILAR_KEYS, response.url)]

    # -- transport ----------------------------------------------------------------------------------

    def _get(
        self, url: str, *, params: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None
    ) -> _Response:
        """One GET with bounded retries. Returns any non-retryable answer (including 304 and 4xx)."""
        request_headers = {"Accept": "application/json", **(headers or {})}
        shown = str(httpx.URL(url).copy_merge_params(dict(params or {})))
        attempt = 0
        while True:
            retry_after = 0.0
            try:
                with self._http.stream(
                    "GET", url, params=params or None, headers=request_headers, timeout=self.timeout
                ) as response:
                    if response.status_code >= 500 or response.status_code == 429:
                        failure = f"HTTP {response.status_code}"
                        retry_after = _retry_after(response.headers.get("retry-after"))
                    else:
                        body = _read_capped(response, shown, self.max_body_bytes)
                        return _Response(response.status_code, response.headers, body, response.url, response.links)
            except httpx.TimeoutException:
                failure = f"timed out after {self.timeout:g}s"
            except httpx.TransportError as exc:
                failure = f"connection failed ({type(exc).__name__}: {exc})"
            if attempt >= self.retries:
                tries = "1 attempt" if attempt == 0 else f"{attempt + 1} attempts"
                raise LibraryUnavailable(f"GET {shown}: {failure} ({tries})")
            self._sleep(min(self.max_backoff, max(self.backoff * 2**attempt, retry_after)))
            attempt += 1

    def _next_request(
        self, page: Any, response: _Response, first_params: dict[str, str]
    ) -> tuple[str, dict[str, str]] | None:
        pointer: Any = None
        as_cursor = False
        if isinstance(page, dict):
            if page.get("has_more") is False:
                return None
            links = page.get("links") if isinstance(page.get("links"), dict) else page.get("_links")
            candidates: list[tuple[Any, bool]] = [
                (page.get("next"), False),
                (page.get("next_url"), False),
                (page.get("next_page"), False),
                (links.get("next") if isinstance(links, dict) else None, False),
                (page.get("cursor"), True),
                (page.get("next_cursor"), True),
            ]
            for value, cursor in candidates:
                if isinstance(value, dict):
                    value = value.get("href")
                if value not in (None, "", False):
                    pointer, as_cursor = value, cursor
                    break
        if pointer is None:
            pointer = response.links.get("next", {}).get("url")
            if not pointer:
                return None
        listing = f"{self.base_url}/cases"
        if isinstance(pointer, bool) or not isinstance(pointer, str | int):
            raise LibraryResponseError(f"GET {response.url}: unreadable next-page pointer {pointer!r}")
        numbered = (
            isinstance(page, dict)
            and isinstance(pointer, str)
            and pointer.isdigit()
            and page.get("next_page") == pointer
        )
        if isinstance(pointer, int) or (not as_cursor and numbered):
            return listing, {**first_params, "page": str(pointer)}
        if not as_cursor and pointer.startswith(("http://", "https://", "/", "?")):
            target = response.url.join(pointer)
            if (target.scheme, target.host, target.port) != (response.url.scheme, response.url.host, response.url.port):
                raise LibraryResponseError(f"GET {response.url}: next page {target} is on another server")
            return str(target), {}
        return listing, {**first_params, "cursor": pointer}


def _read_capped(response: httpx.Response, shown: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise LibraryResponseError(f"GET {shown}: answer larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0  # an HTTP date: the exponential backoff is good enough


def _json(response: _Response) -> Any:
    try:
        return json.loads(response.body)
    except (ValueError, RecursionError) as exc:
        raise LibraryResponseError(f"GET {response.url}: answer is not JSON ({exc})") from exc


def _page_items(page: Any, keys: tuple[str, ...], url: httpx.URL) -> list[Any]:
    if isinstance(page, list):
        return page
    if isinstance(page, dict):
        for key in keys:
            if isinstance(page.get(key), list):
                items: list[Any] = page[key]
                return items
    raise LibraryResponseError(f"GET {url}: expected a JSON array or an object with one of {', '.join(keys)}")


def _ref(item: Any) -> CaseRef:
    if isinstance(item, str):
        return CaseRef(item.strip())
    if isinstance(item, dict):
        raw_id = item.get("id")
        updated = item.get("updated_at")
        return CaseRef(
            raw_id.strip() if isinstance(raw_id, str) else "",
            updated if isinstance(updated, str) else None,
            item,
        )
    return CaseRef("", None, {"entry": item})
