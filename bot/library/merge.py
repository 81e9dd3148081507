"""Merging a case from the incident library over the local file: remote data wins for the library's own
fields; everything the bot adds locally survives (``failure_class``, ``signatures``, remediation
``template``s), and a language side or a key the library did not send is never blanked. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from bot.model.case import LANGS, SEVERITIES, Case

LOCAL_ONLY_FIELDS = ("failure_class", "signatures", "runbook", "gist", "review_notes")
_MODEL_ORDER = tuple(Case.model_fields)
_KNOWN_SEVERITIES = tuple(s for s in SEVERITIES if s != "unknown")


_MISSING: Any = object()


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def has_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_localized(value: Any) -> bool:
    return isinstance(value, dict) and any(has_text(value.get(lang)) for lang in LANGS)


def _merge_value(key: str | None, local: Any, remote: Any) -> Any:
    if local is _MISSING:
        return remote
    if key in LANGS and _blank(remote) and has_text(local):
        return local
    if remote is None and _is_localized(local):
        return local
    if isinstance(remote, dict) and isinstance(local, dict):
        return _merge_dict(local, remote)
    if isinstance(remote, list) and isinstance(local, list) and len(remote) == len(local):
        # Same length: items correspond by position (a language side missing in one is kept).
        return [_merge_value(None, old, new) for old, new in zip(local, remote, strict=True)]
    return remote


def _merge_dict(local: dict[str, Any], remote: dict[str, Any]) -> dict[str, Any]:
    """Local key order first, then keys new in the library. A key the library did not send is kept."""
    merged = {key: _merge_value(key, value, remote[key]) if key in remote else value for key, value in local.items()}
    merged.update({key: value for key, value in remote.items() if key not in merged})
    return merged


def _step_texts(step: Any) -> set[str]:
    text = step.get("text") if isinstance(step, dict) else None
    if not isinstance(text, dict):
        return set()
    return {" ".join(text[lang].split()).casefold() for lang in LANGS if has_text(text.get(lang))}


def _merge_steps(local: list[Any], remote: list[Any], notes: list[str]) -> list[Any]:
    """Pair each library step with a local one by equal text (either language), else by equal position
    when that local step is still free; a paired step keeps its local ``template`` and language sides."""
    pairs: list[int | None] = [None] * len(remote)
    used: set[int] = set()
    for r_index, step in enumerate(remote):
        texts = _step_texts(step)
        for l_index, old in enumerate(local):
            if l_index not in used and texts & _step_texts(old):
                pairs[r_index] = l_index
                used.add(l_index)
                break
    for r_index in range(len(remote)):
        if pairs[r_index] is None and r_index < len(local) and r_index not in used:
            pairs[r_index] = r_index
            used.add(r_index)
    merged: list[Any] = []
    for step, paired in zip(remote, pairs, strict=True):
        old = local[paired] if paired is not None else _MISSING
        new = _merge_value(None, old, step)
        if isinstance(new, dict) and isinstance(old, dict) and old.get("template") is not None:
            new["template"] = old["template"]
        merged.append(new)
    for l_index, old in enumerate(local):
        if l_index not in used and isinstance(old, dict) and old.get("template") is not None:
            notes.append(
                f"remediation[{l_index}] template {old['template']!r} has no step left in the library's version"
            )
    return merged


def _ordered(data: dict[str, Any], first: Iterable[str]) -> dict[str, Any]:
    keys = [key for key in dict.fromkeys([*first, *_MODEL_ORDER]) if key in data]
    return {**{key: data[key] for key in keys}, **data}


def merge_case(local: dict[str, Any] | None, remote: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The case to write: ``remote`` merged over ``local`` (the current file, or None for a new case).

    Local-only fields are kept, remediation templates follow their step (matched by text, else by
    position), a language side present locally but missing or blank remotely is kept (recursively), and a
    key the library did not send keeps its local value. Keys keep the local file's order; a new case gets
    the model's field order (as the bundled files have). Returns the merged case and notes for the report.
    Pure: does not validate.
    """
    notes: list[str] = []
    if local is None:
        return _ordered(dict(remote), ()), notes
    merged = _merge_dict(local, remote)
    for key in LOCAL_ONLY_FIELDS:
        if key in local:
            merged[key] = local[key]
    # Severity on the bot's scale (job, node, fleet) is chosen here from the case's facts; the library's
    # own value wins only when it says more than "unknown".
    if local.get("severity") in _KNOWN_SEVERITIES and remote.get("severity") in (None, "", "unknown"):
        merged["severity"] = local["severity"]
    # Sources added here (the primary documents a runbook's commands were checked against) follow the
    # library's own.
    if isinstance(local.get("sources"), list) and isinstance(remote.get("sources"), list):
        theirs = {source.get("url") for source in remote["sources"] if isinstance(source, dict)}
        ours = [s for s in local["sources"] if isinstance(s, dict) and s.get("url") not in theirs]
        merged["sources"] = [*remote["sources"], *ours]
    steps_l, steps_r = local.get("remediation"), remote.get("remediation")
    if isinstance(steps_l, list) and isinstance(steps_r, list):
        merged["remediation"] = _merge_steps(steps_l, steps_r, notes)
    return _ordered(merged, local), notes


def dump_case(data: dict[str, Any]) -> bytes:
    """The bundled files' format: 2-space indent, UTF-8 without escapes, newline at the end."""
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
