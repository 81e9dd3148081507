"""The audit trail of what operators did to nodes from Slack (``bot.app.drains``), as a base of
:class:`bot.storage.sql.SqlStorage`. A pending request changes state at most once, across replicas: the
update is conditional on the state it expects, so two operators approving at once approve once."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, select, update

from bot.model.nodestate import ActionRecord
from bot.storage.schema import actions


def _row(row: Row[Any]) -> ActionRecord:
    return ActionRecord(**{f.name: row._mapping[f.name] for f in fields(ActionRecord)})


class ActionTables:
    """Needs ``_write`` and ``_rows`` (see :class:`bot.storage.sql_learning.LearningTables`)."""

    def _write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _rows(self, statement: Any) -> list[Row[Any]]:
        raise NotImplementedError

    def add_action(self, record: ActionRecord) -> int:
        values = {name: value for name, value in asdict(record).items() if name != "id"}
        with self._write() as conn:
            key = conn.execute(actions.insert().values(**values)).inserted_primary_key
            assert key is not None
            return int(key[0])

    def decide_action(
        self, action_id: int, expected: str, status: str, *, answer: str, approved_by: str, decided_at: datetime
    ) -> bool:
        statement = (
            update(actions)
            .where(actions.c.id == action_id, actions.c.status == expected)
            .values(status=status, answer=answer, approved_by=approved_by, decided_at=decided_at)
        )
        with self._write() as conn:
            return conn.execute(statement).rowcount == 1

    def get_action(self, action_id: int) -> ActionRecord | None:
        rows = self._rows(select(actions).where(actions.c.id == action_id))
        return _row(rows[0]) if rows else None

    def list_actions(self, since: datetime, node: str | None = None) -> list[ActionRecord]:
        statement = select(actions).where(actions.c.created_at >= since)
        if node is not None:
            statement = statement.where(actions.c.node == node)
        statement = statement.order_by(actions.c.created_at.desc(), actions.c.id.desc()).limit(5000)
        return [_row(row) for row in self._rows(statement)]
