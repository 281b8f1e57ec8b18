"""The live text of one model turn: what the provider streams, cleaned, bounded and coalesced.

The provider calls ``TurnStream.feed`` with each piece of the turn's plain ``content`` as it
arrives (and with ``""`` on every other chunk it reads: a tick). Pieces are gathered and written
(runs/streams.py: the row, then the delta to the run's readers) at most every
``COALESCE_SECONDS`` or once ``COALESCE_CHARS`` are waiting; the first text of a turn goes out
at once, so the first words reach the reader without waiting for the interval.

The same mechanical cleaning as Publication's prepare step applies (``clean_text``: control
characters, line endings, lone surrogates), and the stream never holds more than
``MAX_DISPLAY_CHARS`` display characters. A trailing CR is held back until the next piece, so a
CRLF split across two deltas cleans as the whole text does.
Markers are plain text here: nothing in the stream is verified.
"""

import time
from typing import Any

from publication.text import MAX_DISPLAY_CHARS, clean_text
from runs.models import AgentCall, Run
from runs.streams import close_stream, extend_stream

COALESCE_SECONDS = 0.05
COALESCE_CHARS = 2000


class TurnStream:
    def __init__(self, run: Run, call: AgentCall, step: int) -> None:
        self.run, self.call, self.step = run, call, step
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
                self.pending.append(cleaned)
                self.pending_chars += len(cleaned)
        if not self.pending:
            return
        if (
            self.length == 0
            or self.pending_chars >= COALESCE_CHARS
            or time.monotonic() - self.flushed_at >= COALESCE_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write what is waiting (bounded) as one delta."""
        if self.stopped or not self.pending:
            return
        delta = "".join(self.pending)
        self.pending, self.pending_chars = [], 0
        room = MAX_DISPLAY_CHARS - self.length
        if len(delta) >= room:
            delta, self.truncated = delta[:room], len(delta) > room
        self.flushed_at = time.monotonic()
        if delta and not extend_stream(
            self.run,
            self.call,
            self.step,
            offset=self.length,
            delta=delta,
            truncated=self.truncated,
        ):
            self.stopped = True
            return
        self.length += len(delta)
        if self.length >= MAX_DISPLAY_CHARS:
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


def close_reason(receipt: dict[str, Any] | None) -> str:
    """What replaced the streamed text: the outcome of Publication's receipt, lower case
    (``committed``, ``previewed``, ``rejected``, ``save_unknown``, …); ``empty`` when the turn
    published nothing."""
    if not receipt:
        return "empty"
    return str(receipt.get("outcome", "empty")).lower()
