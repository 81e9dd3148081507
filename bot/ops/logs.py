"""Structured logs: JSON in production, readable lines in a terminal; never a token.

Everything that logs through the standard library (slack_bolt, aiohttp, apscheduler) goes through the same
structlog processors, so every line has the same shape and the same redaction.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

_SECRET = re.compile(r"\b(xox[abposr]|xapp)-[A-Za-z0-9-]{4,}")
_SIGNATURE = re.compile(r"\bv0=[0-9a-f]{16,}")


def redact(text: str) -> str:
    """Slack tokens and request signatures replaced by their prefix and ``***``."""
    return _SIGNATURE.sub("v0=***", _SECRET.sub(lambda m: f"{m.group(1)}-***", text))


def _redact_processor(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key, value in list(event.items()):
        if isinstance(value, str):
            event[key] = redact(value)
    return event


def configure_logging(level: str = "INFO", fmt: str = "auto") -> None:
    """Set up structlog and the standard library's root logger. ``fmt``: json, console or auto (JSON
    unless stderr is a terminal)."""
    as_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        _redact_processor,
    ]
    renderer: Any = structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The SDKs log whole request and response bodies at DEBUG (a pasted line, search words, a DM): their
    # loggers stay at INFO whatever LOG_LEVEL says; our own debug lines never carry bodies.
    for name in QUIET_AT_DEBUG:
        logging.getLogger(name).setLevel(max(logging.INFO, root.level))
    server = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, _OneLineWithoutBytes) for f in server.filters):
        server.addFilter(_OneLineWithoutBytes())


class _OneLineWithoutBytes(logging.Filter):
    """aiohttp logs a malformed request (a bad chunk size, a broken header) as an ERROR traceback that quotes
    the bytes received: anyone can send them, unauthenticated. One WARNING line naming the error's type."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            kind = type(record.exc_info[1]).__name__
            record.msg, record.args = "malformed HTTP request dropped (%s)", (kind,)
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


QUIET_AT_DEBUG = ("slack_sdk", "slack_bolt", "httpx", "httpcore", "aiohttp.access", "aiohttp.client", "mcp")


def get_logger(name: str) -> Any:
    return structlog.stdlib.get_logger(name)
