"""A command's reply read as it arrives, never more than a limit of it held: every
connection reads stdout and stderr through one :class:`Capture` each, and a command
whose stream goes past its limit is killed (``Result.truncated``; ``Connection.run``
raises ``OutputTooLarge``). The limit is ``limits.CAPTURE_LIMIT_BYTES``: one tool output
as ``nicbench parse`` reads it, and nicbench's own framing around it."""

from __future__ import annotations


class Capture:
    """One stream of a reply: what came, up to ``limit`` bytes; ``over`` once more came."""

    def __init__(self, limit: int):
        self.limit = limit
        self.data = bytearray()
        self.over = False

    def add(self, chunk: bytes) -> bool:
        """Keep what fits of ``chunk``; True once the stream has gone past the limit."""
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.data += chunk[:max(room, 0)]
            self.over = True
        else:
            self.data += chunk
        return self.over

    def __len__(self) -> int:
        return len(self.data)
