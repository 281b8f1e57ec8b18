"""The live text of one model turn: what the provider streams, cleaned, bounded and coalesced.

The provider calls ``TurnStream.feed`` with each piece of the turn's plain ``content`` as it
arrives (and with ``""`` on every other chunk it reads: a tick). Pieces are gathered and written
(runs/streams.py: the row, then the delta to the run's readers) at most every
``COALESCE_SECONDS`` or once ``COALESCE_CHARS`` are waiting; the first text of a turn goes out
at once, so the first words reach the reader without waiting for the interval.

On PostgreSQL the writes of every turn a worker process streams are ONE statement per
interval (``StreamWriter``, on a connection of its own: ``runs.streams.extend_streams``), not
one per run on the run's own connection: a run gives its connection back while the model
thinks, and 50 runs streaming at once on a pool of 25 waited seconds for one to write their
first words (docs/performance.md, "The text stream"). A turn's last text is written by the
run itself (``flush``) before Publication, as before; SQLite writes each run's text itself.

The same mechanical cleaning as Publication's prepare step applies (``clean_text``: control
characters, line endings, lone surrogates), and the stream never holds more than
``MAX_DISPLAY_CHARS`` display characters. A trailing CR is held back until the next piece, so a
CRLF split across two deltas cleans as the whole text does.
Markers are plain text here: nothing in the stream is verified.
"""

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connections

from publication.text import MAX_DISPLAY_CHARS, clean_text
from runs.models import AgentCall, Run
from runs.streams import AGAIN, WRITTEN, StreamWrite, close_stream, extend_stream, extend_streams

logger = logging.getLogger(__name__)

COALESCE_SECONDS = 0.05
COALESCE_CHARS = 2000
# After a failed batch (the database unreachable), how long the writer waits to try again.
WRITER_RETRY_SECONDS = 0.5
# How long the writer keeps its connection with nothing to write.
WRITER_IDLE_SECONDS = 1.0


class TurnStream:
    def __init__(
        self, run: Run, call: AgentCall, step: int, *, batched: bool | None = None
    ) -> None:
        """``batched``: written by the process's ``StreamWriter`` (the default on PostgreSQL)
        or by the caller's thread at each ``feed`` (SQLite; ``False``)."""
        self.run, self.call, self.step = run, call, step
        if batched is None:
            batched = connections["default"].vendor == "postgresql"
        self.writer = stream_writer() if batched else None
        # Between the run's thread (feed, flush) and the writer's (take, landed).
        self.lock = threading.Lock()
        self.length = 0  # code points written (the next offset)
        self.pending: list[str] = []
        self.pending_chars = 0
        self.held = ""  # a trailing CR, cleaned with what follows
        self.flushed_at = 0.0
        self.truncated = False
        self.stopped = False  # the run ended, or the bound was reached

    def feed(self, piece: str) -> None:
        """The provider's callback: ``piece`` of the turn's content ("" on any other chunk)."""
        if self.stopped:
            return
        if piece:
            text = self.held + piece
            self.held = ""
            if text[-1] == "\r":
                text, self.held = text[:-1], text[-1]
            cleaned = clean_text(text)
            if cleaned:
                with self.lock:
                    self.pending.append(cleaned)
                    self.pending_chars += len(cleaned)
        if not self.pending:
            return
        if self.writer is not None:
            self.writer.want(self, now=self.length == 0 or self.pending_chars >= COALESCE_CHARS)
            return
        if (
            self.length == 0
            or self.pending_chars >= COALESCE_CHARS
            or time.monotonic() - self.flushed_at >= COALESCE_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write what is waiting (bounded) as one delta, from this thread: taken back from
        the process's writer first (once its batch in flight has landed)."""
        if self.writer is not None:
            self.writer.withdraw(self)
        taken = self.take()
        if taken is None:
            return
        offset, delta, truncated = taken
        self.flushed_at = time.monotonic()
        written = extend_stream(
            self.run, self.call, self.step, offset=offset, delta=delta, truncated=truncated
        )
        self.landed(WRITTEN if written else "stopped", delta)

    def take(self) -> tuple[int, str, bool] | None:
        """(offset, delta, truncated) of what is waiting, bounded, taken out of ``pending``;
        None when there is nothing to write."""
        with self.lock:
            if self.stopped or not self.pending:
                return None
            delta = "".join(self.pending)
            self.pending, self.pending_chars = [], 0
            room = MAX_DISPLAY_CHARS - self.length
            if len(delta) >= room:
                delta, self.truncated = delta[:room], len(delta) > room
            if not delta:
                self.stopped = True
                return None
            return self.length, delta, self.truncated

    def landed(self, outcome: str, delta: str) -> None:
        """What became of a delta ``take`` gave: written (the offset moves on), to be tried
        again (it goes back before what came since) or stopped (the run ended or was taken
        over: nothing more is written)."""
        with self.lock:
            if outcome == WRITTEN:
                self.length += len(delta)
                if self.length >= MAX_DISPLAY_CHARS:
                    self.stopped = True
            elif outcome == AGAIN:
                self.pending.insert(0, delta)
                self.pending_chars += len(delta)
            else:
                self.stopped = True

    def close(self, reason: str) -> None:
        """End the stream (only a stream that showed something has anything to end)."""
        if self.held and not self.stopped:
            self.pending.append(clean_text(self.held))
            self.held = ""
        self.flush()
        if self.length:
            close_stream(self.run, self.call, self.step, length=self.length, reason=reason)
        self.length = 0
        self.stopped = True


class StreamWriter:
    """Writes the live text of every turn this process streams: ONE statement per
    ``COALESCE_SECONDS`` for all of them (``runs.streams.extend_streams``), on a connection of
    its own (autocommit, outside the pool the runs wait on), from one thread.

    A stream with text waiting asks for a write (``want``); the first text of a turn, or a
    full ``COALESCE_CHARS``, is written at once, anything else with the next interval. While
    a statement runs, text gathers for the next: the interval stretches with the load on
    its own, each statement carrying more streams, never more statements. A run takes its
    stream back (``withdraw``) to write the turn's last text itself.
    """

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.streams: set[TurnStream] = set()
        self.in_flight: set[TurnStream] = set()
        self.dirty = self.urgent = False
        self.thread: threading.Thread | None = None
        self.written_at = 0.0
        self.statements = 0

    def want(self, stream: TurnStream, *, now: bool) -> None:
        with self.cond:
            self.streams.add(stream)
            self.dirty = True
            self.urgent = self.urgent or now
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._write_forever, name="sparktide-stream-writer", daemon=True
                )
                self.thread.start()
            self.cond.notify()

    def withdraw(self, stream: TurnStream) -> None:
        """Give ``stream`` back to its run (which writes its last text itself): nothing of
        it is in flight on return."""
        with self.cond:
            self.streams.discard(stream)
            while stream in self.in_flight:
                self.cond.wait()

    def _next_batch(
        self, idle: Callable[[], None]
    ) -> list[tuple[TurnStream, tuple[int, str, bool]]]:
        with self.cond:
            while not self.dirty:
                if not self.cond.wait(WRITER_IDLE_SECONDS):
                    idle()  # nothing to write for a while: its connection is closed
            # The interval, unless a turn's first text (or a full batch) comes meanwhile:
            # text that arrives during it joins the batch instead of starting one.
            while not self.urgent:
                wait = self.written_at + COALESCE_SECONDS - time.monotonic()
                if wait <= 0:
                    break
                self.cond.wait(wait)
            self.dirty = self.urgent = False
            batch = []
            for stream in list(self.streams):
                taken = stream.take()
                if taken is not None:
                    batch.append((stream, taken))
                    self.in_flight.add(stream)
                elif stream.stopped:
                    self.streams.discard(stream)
            self.written_at = time.monotonic()
            return batch

    def _write_forever(self) -> None:
        cursor: Any = None

        def idle() -> None:
            nonlocal cursor
            if cursor is not None:
                with contextlib.suppress(Exception):
                    cursor.connection.close()
                cursor = None

        while True:
            batch = self._next_batch(idle)
            if not batch:
                continue
            writes: list[StreamWrite] = [
                (s.run.pk, s.run.execution_epoch, s.call.pk, s.step, offset, delta, truncated)
                for s, (offset, delta, truncated) in batch
            ]
            failed = False
            try:
                if cursor is None:
                    cursor = _own_connection().cursor()
                self.statements += 1
                outcome = extend_streams(cursor, writes)
            except Exception as exc:  # the database unreachable: kept, written with the next
                logger.warning("live text not written, tried again: %r", exc)
                idle()
                outcome, failed = {}, True
            with self.cond:
                for stream, (_, delta, _) in batch:
                    stream.landed(outcome.get(stream.call.pk, AGAIN), delta)
                    self.dirty = True
                self.in_flight.clear()
                self.cond.notify_all()
            if failed:
                time.sleep(WRITER_RETRY_SECONDS)


def _own_connection() -> Any:
    """An autocommit connection of the writer's own to the default database (not pooled:
    the runs' pool may be all taken), as the worker's LISTEN connection is made."""
    import psycopg

    params = {
        key: value
        for key, value in connections["default"].get_connection_params().items()
        if key not in ("cursor_factory", "context", "prepare_threshold")
    }
    return psycopg.connect(**params, autocommit=True)


_writer: StreamWriter | None = None
_writer_lock = threading.Lock()


def stream_writer() -> StreamWriter:
    """This process's writer of live text."""
    global _writer
    with _writer_lock:
        if _writer is None:
            _writer = StreamWriter()
        return _writer


def close_reason(receipt: dict[str, Any] | None) -> str:
    """What replaced the streamed text: the outcome of Publication's receipt, lower case
    (``committed``, ``previewed``, ``rejected``, ``save_unknown``, …); ``empty`` when the turn
    published nothing."""
    if not receipt:
        return "empty"
    return str(receipt.get("outcome", "empty")).lower()
