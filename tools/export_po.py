"""The catalog (``bot.replies.catalog``) as a gettext ``.po`` file for translators' tools, and back.

    .venv/bin/python tools/export_po.py > ko.po          # every entry: msgctxt = key, msgid = English, msgstr = Korean
    .venv/bin/python tools/export_po.py --read ko.po     # print the entries whose Korean differs from the catalog

``msgfmt --check ko.po`` (GNU gettext) accepts what this writes. Reading back does not edit the catalog: a
translator's changes are reviewed and copied in by hand, like any other change to user-facing text."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from bot.replies.catalog import CATALOG

_HEADER = (
    'msgid ""\nmsgstr ""\n"Project-Id-Version: incident-bot\\n"\n"PO-Revision-Date: 2026-12-02 00:00+0000\\n"\n'
    '"Last-Translator: incident-bot maintainers\\n"\n"Language-Team: Korean\\n"\n"Language: ko\\n"\n'
    '"MIME-Version: 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n'
)


def _quoted(text: str) -> str:
    """``text`` as a .po string: one quoted line, or "" and one quoted line per line of ``text``."""
    escaped = [line.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") for line in text.split("\n")]
    if len(escaped) == 1:
        return f'"{escaped[0]}"'
    return '""\n' + "\n".join(f'"{line}\\n"' for line in escaped[:-1]) + (f'\n"{escaped[-1]}"' if escaped[-1] else "")


def export() -> str:
    entries = [_HEADER]
    for key, entry in CATALOG.items():
        entries.append(f"msgctxt {_quoted(key)}\nmsgid {_quoted(entry['en'])}\nmsgstr {_quoted(entry['ko'])}\n")
    return "\n".join(entries)


def read(text: str) -> dict[str, tuple[str, str]]:
    """key: (English, Korean) of every entry of a .po file this tool wrote (header skipped)."""
    found: dict[str, tuple[str, str]] = {}
    fields: dict[str, str] = {}
    current = ""
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if "msgctxt" in fields:
                found[fields["msgctxt"]] = (fields.get("msgid", ""), fields.get("msgstr", ""))
            fields = {}
            continue
        if line.startswith("#"):
            continue
        name, _, rest = line.partition(" ")
        if name in ("msgctxt", "msgid", "msgstr"):
            current = name
            fields[current] = ast.literal_eval(rest)
        else:
            fields[current] += ast.literal_eval(line)
    return found


def main(argv: list[str]) -> int:
    if argv[:1] == ["--read"]:
        for key, (_, korean) in read(Path(argv[1]).read_text(encoding="utf-8")).items():
            if key in CATALOG and CATALOG[key]["ko"] != korean:
                print(f"{key}: {korean}")
        return 0
    sys.stdout.write(export())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
