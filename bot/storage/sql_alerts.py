"""Alertmanager notifications and the messages that answer them (``bot.app.alerts``), as a base of
:class:`bot.storage.sql.SqlStorage`. A message is claimed by inserting its (group key, node) row: the unique
index lets one replica post and the others follow up, whatever order the notifications arrive in."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, select, update

from bot.model.nodestate import AlertPost
from bot.storage.schema import alert_notifications, alert_posts


def _post(row: Row[Any]) -> AlertPost:
    return AlertPost(**{f.name: row._mapping[f.name] for f in fields(AlertPost)})


class AlertTables:
    """Needs ``_write``, ``_rows`` and ``_insert`` (see :class:`bot.storage.sql_learning.LearningTables`)."""

    _insert: Any

    def _write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _rows(self, statement: Any) -> list[Row[Any]]:
        raise NotImplementedError

    def add_alert_notification(self, received_at: datetime, group_key: str, status: str, body: str) -> int:
        values = {"received_at": received_at, "group_key": group_key, "status": status, "body": body, "done": False}
        with self._write() as conn:
            key = conn.execute(alert_notifications.insert().values(**values)).inserted_primary_key
            assert key is not None
            return int(key[0])

    def pending_alert_notifications(self, limit: int = 50) -> list[tuple[int, str]]:
        statement = (
            select(alert_notifications.c.id, alert_notifications.c.body)
            .where(alert_notifications.c.done.is_(False))
            .order_by(alert_notifications.c.id)
            .limit(limit)
        )
        return [(int(row.id), str(row.body)) for row in self._rows(statement)]

    def finish_alert_notification(self, notification_id: int) -> None:
        with self._write() as conn:
            conn.execute(
                update(alert_notifications).where(alert_notifications.c.id == notification_id).values(done=True)
            )

    def claim_alert_post(self, post: AlertPost) -> AlertPost | None:
        values = {name: value for name, value in asdict(post).items() if name != "id"}
        statement = (
            self._insert(alert_posts)
            .values(**values)
            .on_conflict_do_nothing(index_elements=[alert_posts.c.group_key, alert_posts.c.node])
            .returning(alert_posts.c.id)
        )
        with self._write() as conn:
            if conn.execute(statement).first() is None:  # rowcount is not reliable for this on PostgreSQL
                return None
        return self.get_alert_post(post.group_key, post.node)

    def get_alert_post(self, group_key: str, node: str) -> AlertPost | None:
        rows = self._rows(select(alert_posts).where(alert_posts.c.group_key == group_key, alert_posts.c.node == node))
        return _post(rows[0]) if rows else None

    def update_alert_post(self, post_id: int, **changes: Any) -> None:
        with self._write() as conn:
            conn.execute(update(alert_posts).where(alert_posts.c.id == post_id).values(**changes))
