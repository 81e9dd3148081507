"""Downloading files shared in Slack (``file_share``): text-like only, with the bot token, under a byte cap.

Slack answers a download without valid auth with an HTML login page and HTTP 200, so an HTML body is
an error here, never a log. A file over the cap is refused rather than cut: the tail of a log is where
the failure usually is, and a head-only cut would silently miss it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx

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


class FileTooLarge(FileDownloadError):
    """The file is larger than the configured cap."""


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


async def download_file(
    url: str,
    token: str,
    max_bytes: int,
    *,
    declared_size: int | None = None,
    timeout_s: float = 30.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> bytes:
    """GET ``url`` with ``Authorization: Bearer token`` and return its bytes, streaming with a cap.

    Raises :class:`FileTooLarge` when ``declared_size`` or the body exceeds ``max_bytes`` (the download
    stops there), :class:`NotTextFile` when the body is binary, and :class:`FileDownloadError` for an
    HTML login page, an HTTP error status or a network failure. Never logs the token.
    """
    if declared_size is not None and declared_size > max_bytes:
        raise FileTooLarge(_too_large(declared_size, max_bytes))
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with (
            httpx.AsyncClient(timeout=timeout_s, follow_redirects=True, max_redirects=3, transport=transport) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code != 200:
                raise FileDownloadError(f"Slack answered HTTP {response.status_code} for the file.")
            kind = response.headers.get("content-type", "").lower()
            if kind.startswith("text/html"):
                raise FileDownloadError(
                    "Slack sent a login page instead of the file: the bot token is missing the "
                    "files:read scope or cannot see this conversation."
                )
            length = response.headers.get("content-length")
            if length and length.isdigit() and int(length) > max_bytes:
                raise FileTooLarge(_too_large(int(length), max_bytes))
            chunks: list[bytes] = []
            received = 0
            async for chunk in response.aiter_bytes():
                received += len(chunk)
                if received > max_bytes:
                    raise FileTooLarge(_too_large(received, max_bytes, at_least=True))
                chunks.append(chunk)
    except httpx.HTTPError as error:
        log.warning("file download failed: %s", type(error).__name__)
        raise FileDownloadError("The file could not be downloaded from Slack.") from error
    data = b"".join(chunks)
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise NotTextFile("The file is binary, not a text log.")
    return data


def _too_large(size: int, limit: int, *, at_least: bool = False) -> str:
    more = "more than " if at_least else ""
    return f"The file is {more}{size / 1e6:.1f} MB; the limit is {limit / 1e6:.1f} MB."
