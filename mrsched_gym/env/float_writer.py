"""Float32 values written one after another into bytes: ``BytesWriter`` and ``write_f32_le``
of librt (mypyc's run-time library, a dependency on CPython where it has binary wheels: x86-64,
ARM64, i686 and riscv64), which the compiled build
(``setup.py``) turns into stores, without a Python float per value; where librt is not
installed, :class:`FallbackWriter` and :func:`fallback_write_f32_le`, the same bytes in Python.

The observation (:mod:`mrsched_gym.env.encoding`) is written with these: float32, little-endian
(``"<f4"``), each value the C cast of its double (round to nearest; beyond float32's range,
infinity), as numpy's ``astype(np.float32)`` casts it; a big-endian machine converts the arrays
to its own byte order once built.
"""

from __future__ import annotations

import struct
import sys


class FallbackWriter:
    """``librt.strings.BytesWriter``'s ``write`` and ``getvalue``, in Python."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def write(self, b: bytes | bytearray, /) -> None:
        """Append ``b``."""
        self.buf += b

    def getvalue(self) -> bytes:
        """The bytes written so far."""
        return bytes(self.buf)


#: The C cast to float32 (``struct``'s native ``f``; its standard ``<f`` refuses values beyond
#: float32's range instead of making them infinite), in this machine's byte order.
_NATIVE_F32 = struct.Struct("f")
_BIG_ENDIAN = sys.byteorder == "big"


def fallback_write_f32_le(b: FallbackWriter, n: float, /) -> None:
    """``librt.strings.write_f32_le``: append ``n`` as a little-endian float32."""
    packed = _NATIVE_F32.pack(n)
    b.buf += packed[::-1] if _BIG_ENDIAN else packed


try:
    from librt.strings import BytesWriter, write_f32_le
except ImportError:  # pragma: no cover - no librt (not CPython, or no wheel for the platform)
    BytesWriter = FallbackWriter  # type: ignore[misc,assignment]
    write_f32_le = fallback_write_f32_le  # type: ignore[assignment]


__all__ = ["BytesWriter", "FallbackWriter", "fallback_write_f32_le", "write_f32_le"]
