"""Files of the sync: atomic replacement of a case file, and the per-case validators (``ETag``,
``Last-Modified``) kept between runs in ``DATA_DIR/sync-state.json``."""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import suppress
from pathlib import Path

from bot.library.merge import dump_case

STATE_VERSION = 1


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` via a temporary file in the same directory and ``os.replace``:
    readers see the old file or the new one, never a part. Keeps the old file's permission bits."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp)
        raise


class SyncState:
    """Validators per case (``ETag``, ``Last-Modified``, ``updated_at``) for one API URL, in a small JSON
    file. A missing, unreadable or other-server file starts empty: the next sync fetches everything."""

    def __init__(self, path: Path | None, api_url: str) -> None:
        self.path = path
        self.api_url = api_url
        self.cases: dict[str, dict[str, str]] = {}
        self.problem: str | None = None
        if path is None or not path.exists():
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            self.problem = f"ignored unreadable sync state {path}: {exc}"
            return
        if isinstance(data, dict) and data.get("version") == STATE_VERSION and data.get("api_url") == api_url:
            cases = data.get("cases")
            if isinstance(cases, dict):
                self.cases = {k: v for k, v in cases.items() if isinstance(v, dict)}

    def validators(self, case_id: str) -> tuple[str | None, str | None]:
        entry = self.cases.get(case_id, {})
        return entry.get("etag"), entry.get("last_modified")

    def record(self, case_id: str, etag: str | None, last_modified: str | None, updated_at: str | None) -> None:
        entry = {"etag": etag, "last_modified": last_modified, "updated_at": updated_at}
        self.cases[case_id] = {k: v for k, v in entry.items() if v}

    def forget(self, case_id: str) -> None:
        self.cases.pop(case_id, None)

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {"version": STATE_VERSION, "api_url": self.api_url, "cases": dict(sorted(self.cases.items()))}
        write_atomic(self.path, dump_case(body))
