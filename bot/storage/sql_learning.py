"""The tables the bot learns into (confirmed examples, drafts, reviews, node memory), as a base of
:class:`bot.storage.sql.SqlStorage`: the same connection handling, kept apart to keep each module small."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Row, func, select, update

from bot.storage.base import DraftRecord, ExampleRecord, NodeEvent, RejectionRecord, ReviewRecord, line_key
from bot.storage.schema import drafts, example_rejections, examples, node_events, reviews

R = TypeVar("R")


def _values(record: Any) -> dict[str, Any]:
    """A record dataclass as the column values of its row (its fields are named like the columns)."""
    return {name: value for name, value in asdict(record).items() if name != "id"}


def _record(kind: type[R], row: Row[Any]) -> R:
    """The record dataclass ``kind`` of a row: each field from the column of the same name."""
    return kind(**{f.name: row._mapping[f.name] for f in fields(kind)})  # type: ignore[arg-type]


class LearningTables:
    """Needs ``_write`` (a write transaction), ``_rows`` (a read) and ``_insert`` (the dialect's insert)."""

    _insert: Any

    def _write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _rows(self, statement: Any) -> list[Row[Any]]:
        raise NotImplementedError

    # confirmed examples -------------------------------------------------------------------------------
    def add_examples(
        self, case_id: str, lines: tuple[str, ...], user_id: str, channel: str, reply_id: int, now: datetime
    ) -> int:
        if not lines:
            return 0
        with self._write() as conn:
            for line in dict.fromkeys(lines):
                key = {"case_id": case_id, "user_id": user_id, "line_key": line_key(line)}
                values = {"line": line, "channel": channel, "reply_id": reply_id, "created_at": now}
                conn.execute(
                    self._insert(examples)
                    .values(**key, **values, rejections=0)
                    .on_conflict_do_update(index_elements=[examples.c[name] for name in key], set_=values)
                )
        return len(dict.fromkeys(lines))

    def withdraw_examples(self, reply_id: int, user_id: str, case_id: str) -> int:
        statement = examples.delete().where(
            examples.c.reply_id == reply_id, examples.c.user_id == user_id, examples.c.case_id == case_id
        )
        with self._write() as conn:
            return int(conn.execute(statement).rowcount or 0)

    def reject_examples(self, case_id: str, lines: tuple[str, ...], user_id: str, reviewer: bool, now: datetime) -> int:
        if not lines:
            return 0
        by_key = {line_key(line): line for line in lines}
        with self._write() as conn:
            stored = conn.execute(
                select(examples.c.line_key)
                .where(examples.c.case_id == case_id, examples.c.line_key.in_(list(by_key)))
                .distinct()
            ).scalars()
            keys = list(stored)
            for key in keys:
                row = {"case_id": case_id, "line": by_key[key], "line_key": key, "user_id": user_id}
                conn.execute(
                    self._insert(example_rejections)
                    .values(**row, reviewer=reviewer, created_at=now)
                    .on_conflict_do_nothing(index_elements=["case_id", "line_key", "user_id"])
                )
            if keys:
                people = (
                    select(func.count())
                    .where(
                        example_rejections.c.case_id == examples.c.case_id,
                        example_rejections.c.line_key == examples.c.line_key,
                    )
                    .scalar_subquery()
                )
                conn.execute(
                    update(examples)
                    .where(examples.c.case_id == case_id, examples.c.line_key.in_(keys))
                    .values(rejections=people)
                )
        return len(keys)

    def list_rejections(self, since: datetime) -> list[RejectionRecord]:
        statement = (
            select(example_rejections).where(example_rejections.c.created_at >= since).order_by(example_rejections.c.id)
        )
        return [_record(RejectionRecord, row) for row in self._rows(statement)]

    def delete_example(self, example_id: int) -> int:
        with self._write() as conn:
            found = conn.execute(
                select(examples.c.case_id, examples.c.line_key).where(examples.c.id == example_id)
            ).first()
            if found is None:
                return 0
            case_id, key = found
            conn.execute(
                example_rejections.delete().where(
                    example_rejections.c.case_id == case_id, example_rejections.c.line_key == key
                )
            )
            statement = examples.delete().where(examples.c.case_id == case_id, examples.c.line_key == key)
            return int(conn.execute(statement).rowcount or 0)

    def list_examples(self, since: datetime, case_id: str | None = None) -> list[ExampleRecord]:
        statement = select(examples).where(examples.c.created_at >= since).order_by(examples.c.id)
        if case_id is not None:
            statement = statement.where(examples.c.case_id == case_id)
        return [_record(ExampleRecord, row) for row in self._rows(statement)]

    def examples_version(self, since: datetime) -> tuple[int, int, int]:
        statement = select(func.count(), func.coalesce(func.max(examples.c.id), 0)).where(
            examples.c.created_at >= since
        )
        row: Any = self._rows(statement)[0]
        rejections: Any = self._rows(
            select(func.count()).select_from(example_rejections).where(example_rejections.c.created_at >= since)
        )[0]
        return int(row[0]), int(row[1]), int(rejections[0])

    def purge_examples(self, before: datetime) -> int:
        with self._write() as conn:
            conn.execute(example_rejections.delete().where(example_rejections.c.created_at < before))
            return int(conn.execute(examples.delete().where(examples.c.created_at < before)).rowcount or 0)

    # drafts and reviews ------------------------------------------------------------------------------
    def _insert_row(self, table: Any, values: dict[str, Any]) -> int:
        with self._write() as conn:
            found = conn.execute(table.insert().values(**values).returning(table.c.id)).first()
        assert found is not None  # INSERT ... RETURNING always returns the row
        return int(found[0])

    def add_draft(self, draft: DraftRecord) -> int:
        if draft.form_nonce is not None:
            with self._write() as conn:
                conn.execute(
                    self._insert(drafts).values(**_values(draft)).on_conflict_do_nothing(index_elements=["form_nonce"])
                )
                found = conn.execute(select(drafts.c.id).where(drafts.c.form_nonce == draft.form_nonce)).scalar_one()
            return int(found)
        return self._insert_row(drafts, _values(draft))

    def mark_draft_exported(self, draft_id: int, case_id: str) -> None:
        with self._write() as conn:
            conn.execute(update(drafts).where(drafts.c.id == draft_id).values(exported_as=case_id))

    def get_draft(self, draft_id: int) -> DraftRecord | None:
        rows = self._rows(select(drafts).where(drafts.c.id == draft_id))
        return _record(DraftRecord, rows[0]) if rows else None

    def list_drafts(self) -> list[DraftRecord]:
        return [_record(DraftRecord, row) for row in self._rows(select(drafts).order_by(drafts.c.id.desc()))]

    def add_review(self, review: ReviewRecord) -> int:
        return self._insert_row(reviews, _values(review))

    def list_reviews(self, case_id: str | None = None) -> list[ReviewRecord]:
        statement = select(reviews).order_by(reviews.c.reviewed_at, reviews.c.id)
        if case_id is not None:
            statement = statement.where(reviews.c.case_id == case_id)
        return [_record(ReviewRecord, row) for row in self._rows(statement)]

    # node memory -------------------------------------------------------------------------------------
    def add_node_events(self, events: tuple[NodeEvent, ...], purge_before: datetime) -> None:
        rows = [_values(event) for event in events]
        with self._write() as conn:
            conn.execute(node_events.delete().where(node_events.c.created_at < purge_before))
            if rows:
                conn.execute(node_events.insert(), rows)

    def node_events(self, since: datetime, hosts: tuple[str, ...] | None = None) -> list[NodeEvent]:
        statement = select(node_events).where(node_events.c.created_at >= since)
        if hosts is not None:
            statement = statement.where(node_events.c.host.in_(hosts))
        statement = statement.order_by(node_events.c.created_at.desc(), node_events.c.id.desc()).limit(5000)
        return [_record(NodeEvent, row) for row in self._rows(statement)]
