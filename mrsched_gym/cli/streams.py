r"""The command's output streams, made safe before it runs: :func:`guard_streams`.

What the command prints is for the reader; the files it writes (records, journals, models) are
the results. A stream that cannot take the text must never cost the results:

- **closed** (``mrsched-gym ... >&-``): descriptors 0-2 are pointed at ``/dev/null`` first, so
  no file the command opens can become descriptor 1 (where a library's or child process's
  write to "standard output" would land in the records);
- **ASCII-only** (``PYTHONIOENCODING=ascii``, the C locale of old systems): characters the
  stream cannot encode are written as escapes (``\u00b1`` for a plus-minus sign) instead of raising;
- **full** (``> /dev/full``) or failing: the rest of what is printed to it is dropped, the
  command runs to its end, and :func:`report` says so in one line.

A reader that closes a pipe early (``| head``) still ends the command quietly
(``BrokenPipeError`` passes through, as :func:`~mrsched_gym.cli.parser.run_command` expects).
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, TextIO

STREAM_NAMES = {"stdout": "output", "stderr": "error"}


class GuardedStream(io.TextIOBase):
    """A text stream over ``stream`` that never raises for its encoding or a failed write.

    Args:
        stream: The stream to write to.
        name: ``stdout`` or ``stderr``, for :func:`report`.
    """

    def __init__(self, stream: TextIO, name: str) -> None:
        super().__init__()
        self.stream = stream
        self.name = name
        self.failure: OSError | None = None

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The encoding of the stream it writes to."""
        return str(getattr(self.stream, "encoding", None) or "utf-8")

    def writable(self) -> bool:
        """Always: failed writes are dropped."""
        return True

    def isatty(self) -> bool:
        """Whether the stream it writes to is a terminal."""
        try:
            return bool(self.stream.isatty())
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        """The descriptor of the stream it writes to."""
        return self.stream.fileno()

    def write(self, text: str) -> int:
        """Write ``text`` (escaped where the encoding cannot hold it; dropped after a failure)."""
        if self.failure is None:
            try:
                self.stream.write(text)
            except UnicodeEncodeError:
                self.attempt(self.stream.write,
                             text.encode(self.encoding, "backslashreplace").decode(self.encoding))
            except BrokenPipeError:
                raise
            except (OSError, ValueError) as e:
                self.failed(e)
        return len(text)

    def flush(self) -> None:
        """Flush the stream it writes to (a failure is kept, not raised)."""
        if self.failure is None:
            self.attempt(self.stream.flush)

    def attempt(self, call: Any, *args: Any) -> None:
        """``call(*args)``, a failure other than a closed pipe kept instead of raised."""
        try:
            call(*args)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as e:
            self.failed(e)

    def failed(self, error: OSError | ValueError) -> None:
        """Keep the first failure; later output is dropped, and the descriptor is pointed at
        ``/dev/null`` (so that what is still buffered cannot fail again at exit)."""
        self.failure = error if isinstance(error, OSError) else OSError(str(error))
        try:
            fd = self.stream.fileno()
        except (OSError, ValueError, AttributeError):
            return
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def open_standard_descriptors() -> list[int]:
    """Point each closed descriptor of 0, 1 and 2 at ``/dev/null``; the ones that were closed."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    return closed


def guard_streams() -> list[int]:
    """Make ``sys.stdout`` and ``sys.stderr`` safe (module docstring); the descriptors that
    were closed."""
    closed = open_standard_descriptors()
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, GuardedStream):
            continue
        if stream is None:      # Python starts with None where the descriptor was closed
            stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives on
        setattr(sys, name, GuardedStream(stream, name))
    return closed


def report() -> str | None:
    """One line on what a stream lost to a failure, or None (and the streams are flushed)."""
    lost = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, GuardedStream):
            stream.flush()
            if stream.failure is not None:
                reason = stream.failure.strerror or str(stream.failure)
                lost.append(f"standard {STREAM_NAMES[name]} could not be written ({reason})")
    if not lost:
        return None
    return "; ".join(lost) + ": what the command printed there is lost; the files it writes " \
                             "(records, journals, models) were written"


__all__ = ["GuardedStream", "guard_streams", "open_standard_descriptors", "report"]
