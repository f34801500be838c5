"""Float32 values written one after another into bytes: ``BytesWriter`` and ``write_f32_le``
of librt (mypyc's run-time library, a dependency on CPython), which the compiled build
(``setup.py``) turns into stores, without a Python float per value; where librt is not
installed, stand-ins with the same results (below).

The observation (:mod:`mrsched_gym.encoding`) is written with these: float32, little-endian
(``"<f4"``), each value the C cast of its double (round to nearest), as numpy's
``astype(np.float32)`` and ``struct``'s ``"f"`` cast it; a big-endian machine converts the
arrays to its own byte order once built.
"""

from __future__ import annotations

import struct

try:
    from librt.strings import BytesWriter, write_f32_le
except ImportError:  # pragma: no cover - no librt (not CPython, or no wheel for the platform)
    _F32 = struct.Struct("f")     # the C cast; native order, so reversed on big-endian machines
    _SWAP = struct.pack("=H", 1) != b"\x01\x00"

    class BytesWriter:  # type: ignore[no-redef]
        """``librt.strings.BytesWriter``'s ``write`` and ``getvalue``."""

        __slots__ = ("buf",)

        def __init__(self) -> None:
            self.buf = bytearray()

        def write(self, b: bytes | bytearray, /) -> None:
            """Append ``b``."""
            self.buf += b

        def getvalue(self) -> bytes:
            """The bytes written so far."""
            return bytes(self.buf)

    def write_f32_le(b: BytesWriter, n: float, /) -> None:  # type: ignore[misc]
        """Append ``n`` as a little-endian float32."""
        packed = _F32.pack(n)
        b.buf += packed[::-1] if _SWAP else packed


__all__ = ["BytesWriter", "write_f32_le"]
