"""The wire between the harness and a policy process: length-prefixed frames over a socket.

Each frame is a 4-byte big-endian length and that many bytes. The two directions trust
different things:

* **harness to policy**: a pickle (the harness's own values: a decision's copy, an
  observation, a reply), which only the policy process loads;
* **policy to harness**: JSON (:func:`encode`, :func:`decode`): the harness never unpickles
  what a policy sends, so no policy code runs in the harness; a frame is at most
  :data:`MAX_FROM_POLICY` bytes, and anything else (a longer frame, broken JSON, a message of
  an unknown shape) is the policy's failure (:class:`ChannelError`).
"""

from __future__ import annotations

import json
import pickle
import select
import socket
import struct
import time
from typing import Any

#: The longest frame a policy process may send (1 MiB): its requests, its action, its error
#: text and traceback (which it cuts to fit).
MAX_FROM_POLICY = 1 << 20
#: How much of a policy's error text and traceback it sends (characters).
MAX_TEXT = 20_000
HEADER = struct.Struct(">I")


class ChannelError(Exception):
    """The other end sent something that is no message, or closed the channel."""


class ChannelTimeout(ChannelError):
    """The other end did not answer before the deadline."""


class ChannelClosed(ChannelError):
    """The other end closed the channel (its process ended)."""


def send_frame(sock: socket.socket, data: bytes, deadline: float | None = None) -> None:
    """Send one frame (by ``deadline``, a ``time.monotonic()`` instant; None: no limit; a
    socket with a deadline is non-blocking).

    Raises:
        ChannelTimeout: The deadline passed (the other end does not read).
        ChannelClosed: The other end is gone.
    """
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        try:
            sent = sock.send(view)
        except BlockingIOError:
            wait_ready(sock, deadline, write=True)
            continue
        except OSError as e:
            raise ChannelClosed(f"the channel closed ({e.strerror or e})") from None
        view = view[sent:]


def wait_ready(sock: socket.socket, deadline: float | None, write: bool = False) -> None:
    """Wait until ``sock`` can be read (or written), at most until ``deadline`` (None: no
    limit).

    Raises:
        ChannelTimeout: The deadline passed first.
    """
    poller = select.poll()
    poller.register(sock, select.POLLOUT if write else select.POLLIN)
    poll_until(poller, deadline)


def poll_until(poller: select.poll, deadline: float | None) -> None:
    """Wait until ``poller`` reports its socket ready, at most until ``deadline``.

    Raises:
        ChannelTimeout: The deadline passed first.
    """
    while True:
        if deadline is None:
            timeout_ms = None
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout("no answer before the deadline")
            timeout_ms = max(1, int(left * 1000) + 1)
        if poller.poll(timeout_ms):
            return


class Reader:
    """The frames arriving on one socket, read in chunks (one ``recv`` per frame as a rule).

    Args:
        sock: The socket (non-blocking where a deadline is used).
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.poller = select.poll()
        self.poller.register(sock, select.POLLIN)

    def fill(self, deadline: float | None) -> None:
        """Read what has arrived (waiting for it, by ``deadline``).

        Raises:
            ChannelClosed: The channel closed.
            ChannelTimeout: The deadline passed first.
        """
        while True:
            try:
                chunk = self.sock.recv(1 << 16)
            except BlockingIOError:
                self.wait(deadline)
                continue
            except OSError as e:
                raise ChannelClosed(f"the channel closed ({e.strerror or e})") from None
            if not chunk:
                raise ChannelClosed("the channel closed")
            self.buffer += chunk
            return

    def wait(self, deadline: float | None) -> None:
        """Wait until there is something to read (by ``deadline``)."""
        poll_until(self.poller, deadline)

    def frame(self, deadline: float | None = None, limit: int | None = None) -> bytes:
        """The next frame's bytes (by ``deadline``; at most ``limit`` bytes).

        Raises:
            ChannelError: A frame longer than ``limit`` (:class:`ChannelClosed`,
                :class:`ChannelTimeout`: as :meth:`fill`).
        """
        buffer = self.buffer
        while len(buffer) < 4:
            self.fill(deadline)
        (size,) = HEADER.unpack_from(buffer)
        if limit is not None and size > limit:
            raise ChannelError(f"it sent a message of {size:,} bytes (at most {limit:,})")
        while len(buffer) < 4 + size:
            self.fill(deadline)
        data = bytes(buffer[4:4 + size])
        del buffer[:4 + size]
        return data


def dump(value: Any) -> bytes:
    """A harness-to-policy message (a pickle)."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def encode(message: list[Any]) -> bytes:
    """A policy-to-harness message (JSON; NaN and infinities allowed, as Python writes them)."""
    return json.dumps(message, separators=(",", ":")).encode()


#: The messages a policy process may send, by tag: the types of their items after the tag.
SHAPES: dict[str, tuple[type | tuple[type, ...], ...]] = {
    "ready": (),
    "loaded": (str, str),
    "input_error": (str,),
    "load_error": (str, str, str),
    "fail": (str, str, str),
    "ok": (),
    "phase": (str,),
    "act": (int,),
    "get": (int, str),
    "call": (int, str, list),
    "scalars": (list,),
    "tail": (str, int),
}


def decode(data: bytes) -> list[Any]:
    """A policy-to-harness message, checked against :data:`SHAPES`.

    Raises:
        ChannelError: Not JSON, or not a message of a known shape.
    """
    if len(data) < 32 and data[:7] == b'["act",' and data[-1:] == b"]" and \
            data[7:-1].isdigit():
        return ["act", int(data[7:-1])]             # the common answer, read at once
    try:
        message = json.loads(data)
    except (ValueError, RecursionError) as e:        # a bad encoding, a 5,000-digit number...
        raise ChannelError(f"it sent a message that is not JSON ({str(e)[:80]})") from None
    if not isinstance(message, list) or not message or not isinstance(message[0], str):
        raise ChannelError(f"it sent a message of no known kind: {repr(message)[:80]}")
    shape = SHAPES.get(message[0])
    if shape is None or len(message) != len(shape) + 1 or not all(
            isinstance(v, t) and not (t is int and isinstance(v, bool))
            for v, t in zip(message[1:], shape, strict=True)):
        raise ChannelError(f"it sent a message of no known kind: {repr(message)[:80]}")
    return message


__all__ = ["MAX_FROM_POLICY", "MAX_TEXT", "SHAPES", "ChannelClosed", "ChannelError",
           "ChannelTimeout", "Reader", "decode", "dump", "encode", "poll_until", "send_frame",
           "wait_ready"]
