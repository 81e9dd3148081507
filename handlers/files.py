"""Downloading files shared in Slack (``file_share``): text-like only, with the bot token, in bounded memory.

Slack answers a download without valid auth with an HTML login page and HTTP 200, so an HTML body is an
error here, never a log. A file of any size is matched by its head and tail (errors are usually at the
end): one up to ``max_file_bytes`` is streamed whole through an :class:`ExcerptBuilder`, so its line
numbers are exact; a larger one is fetched by its two ends with HTTP range requests.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx

from bot.model.excerpt import HEAD_SHARE, Excerpt, ExcerptBuilder
from bot.replies.catalog import both_langs

log = logging.getLogger(__name__)

TEXT_FILETYPES = frozenset(
    {
        "text",
        "log",
        "snippet",
        "txt",
        "plain",
        "out",
        "err",
        "python",
        "shell",
        "bash",
        "json",
        "yaml",
        "csv",
        "tsv",
        "markdown",
        "xml",
        "ini",
        "toml",
        "diff",
        "c",
        "cpp",
        "go",
        "rust",
        "java",
        "javascript",
    }
)
TEXT_MIMETYPES = frozenset(
    {
        "application/json",
        "application/x-yaml",
        "application/yaml",
        "application/x-sh",
        "application/xml",
        "application/x-ndjson",
        "application/x-log",
    }
)
_SNIFF_BYTES = 8192


class FileDownloadError(Exception):
    """A shared file could not be used; ``str(error)`` is a short sentence fit to show a user."""


class NotTextFile(FileDownloadError):
    """The file is not text-like (an image, a PDF, a binary)."""


def is_text_file(file: Mapping[str, Any]) -> bool:
    """Whether a ``files[]`` entry of a Slack event looks like text: a text mimetype, a text filetype, or a
    snippet."""
    mimetype = str(file.get("mimetype") or "").lower().split(";")[0].strip()
    filetype = str(file.get("filetype") or "").lower()
    if mimetype.startswith("text/html"):
        return False
    return (
        mimetype.startswith("text/")
        or mimetype in TEXT_MIMETYPES
        or filetype in TEXT_FILETYPES
        or file.get("mode") == "snippet"
    )


def download_url(file: Mapping[str, Any]) -> str | None:
    """The URL to fetch the file's bytes from (``url_private_download``, else ``url_private``)."""
    url = file.get("url_private_download") or file.get("url_private")
    return str(url) if url else None


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` in lower case ("" when it has none)."""
    parsed = httpx.URL(url)
    if not parsed.scheme or not parsed.host:
        return ""
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}".lower()


class _SlackHostsOnly(httpx.AsyncBaseTransport):
    """Sends a request (with the bot token) only to an allowed origin; a redirect is followed only when
    it stays on one, so the token never leaves Slack's file hosts."""

    def __init__(self, allowed: frozenset[str], inner: httpx.AsyncBaseTransport) -> None:
        self.allowed = allowed
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if origin(str(request.url)) not in self.allowed:
            raise FileDownloadError("The file's address is not on Slack's file servers; it was not fetched.")
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def download_file(
    url: str,
    token: str,
    max_bytes: int,
    *,
    max_file_bytes: int,
    allowed_origins: frozenset[str],
    declared_size: int | None = None,
    timeout_s: float = 30.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Excerpt:
    """GET ``url`` with ``Authorization: Bearer token`` and return at most ``max_bytes`` of it (head and
    tail). A file declared larger than ``max_file_bytes`` is fetched by its ends (``Range``); otherwise,
    or when the server ignores ranges, it is streamed, stopping after ``max_file_bytes`` (then only its
    start was read, and the excerpt says so by counting no tail).

    Only ``allowed_origins`` (``https://files.slack.com``) ever see the token: ``url`` and every redirect
    must stay on them. Raises :class:`NotTextFile` for a binary body and :class:`FileDownloadError` for
    another host, an HTML login page, an HTTP error status or a network failure. Never logs the token.
    """
    headers = {"Authorization": f"Bearer {token}"}
    guarded = _SlackHostsOnly(allowed_origins, transport or httpx.AsyncHTTPTransport())
    try:
        async with httpx.AsyncClient(
            timeout=timeout_s, follow_redirects=True, max_redirects=3, transport=guarded
        ) as client:
            if declared_size is not None and declared_size > max_file_bytes:
                ranged = await _ends(client, url, headers, max_bytes, declared_size)
                if ranged is not None:
                    return _text_only(ranged)
            return _text_only(await _stream(client, url, headers, max_bytes, max_file_bytes))
    except httpx.HTTPError as error:
        log.warning("file download failed: %s", type(error).__name__)
        raise FileDownloadError(both_langs("file.download_failed")) from error


def _check(response: httpx.Response, wanted: tuple[int, ...] = (200,)) -> None:
    if response.status_code not in wanted:
        raise FileDownloadError(both_langs("file.http", status=response.status_code))
    if response.headers.get("content-type", "").lower().startswith("text/html"):
        raise FileDownloadError(both_langs("file.login_page"))


async def _stream(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], max_bytes: int, max_file_bytes: int
) -> Excerpt:
    builder = ExcerptBuilder(max_bytes)
    unread = 0
    async with client.stream("GET", url, headers=headers) as response:
        _check(response)
        length = response.headers.get("content-length", "")
        async for chunk in response.aiter_bytes():
            builder.feed(chunk[: max_file_bytes - builder.total])
            if builder.total >= max_file_bytes:
                unread = max(1, int(length) - builder.total) if length.isdigit() else 1
                log.info("shared file read up to MAX_FILE_BYTES (%d bytes); its end was not fetched", max_file_bytes)
                break
    return builder.finish(unread)


async def _ends(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], max_bytes: int, size: int
) -> Excerpt | None:
    """The file's first and last parts by ``Range`` requests; None when the server does not honour them."""
    head_size = int(max_bytes * HEAD_SHARE)
    tail_size = max_bytes - head_size
    parts: list[bytes] = []
    for spec in (f"bytes=0-{head_size - 1}", f"bytes=-{tail_size}"):
        async with client.stream("GET", url, headers={**headers, "Range": spec}) as response:
            if response.status_code == 200:
                return None  # the whole file is coming: let the caller stream it instead
            _check(response, (206,))
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise FileDownloadError("Slack sent more of the file than was asked for.")
            parts.append(body)
    head, tail = parts
    return Excerpt(head, tail, max(0, size - len(head) - len(tail)), None)


def _text_only(cut: Excerpt) -> Excerpt:
    if b"\x00" in cut.head[:_SNIFF_BYTES]:
        raise NotTextFile("The file is binary, not a text log.")
    return cut
