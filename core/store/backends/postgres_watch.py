"""Changes other hosts make to a store in PostgreSQL, as they commit: a thread LISTENs on
the store's channel over a connection of its own and hands each note (see
`PostgresBackend._persist`) to a callback. Notes of this process's own writes and of stores
in other schemas are dropped."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from typing import Any

import orjson
import psycopg

log = logging.getLogger(__name__)

Note = dict[str, Any]
#: how often the thread looks up from waiting to see whether it was stopped (seconds)
POLL = 0.5


class Watcher:
    """The listening thread of one backend; `stop` ends it (and its connection)."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        channel: str,
        schema: str,
        own: Collection[int],
        callback: Callable[[Note], None],
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._schema = schema
        self._own = own
        self._callback = callback
        self._stopped = threading.Event()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="forkwise-listen", daemon=True)
        self._thread.start()
        self._listening.wait(10)  # changes made once `watch` returned are seen

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                with self._connect() as conn:
                    conn.execute(f'LISTEN "{self._channel}"')
                    self._listening.set()
                    while not self._stopped.is_set():
                        for notify in conn.notifies(timeout=POLL):
                            self._deliver(notify.pid, notify.payload)
            except psycopg.Error as exc:  # the server went away: listen again shortly
                self._listening.set()
                log.warning("listening for store changes failed: %s", exc)
                self._stopped.wait(2.0)
            except Exception:
                self._listening.set()
                log.exception("listening for store changes failed")
                self._stopped.wait(2.0)

    def _deliver(self, pid: int, payload: str) -> None:
        if pid in self._own:
            return  # this process's own write: its store announced it already
        try:
            note = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return
        if not isinstance(note, dict) or note.get("schema") != self._schema:
            return
        try:
            self._callback(note)
        except Exception:  # a broken subscriber must not stop the listening
            log.exception("a store change subscriber failed on %s", note.get("kind"))
