"""The observation's float32 writer (``mrsched_gym/env/float_writer.py``): librt's ``BytesWriter``
where librt is installed, a Python stand-in where it is not. Both must write what numpy's cast
to little-endian float32 gives, and an env without librt must observe the same bytes."""

from __future__ import annotations

import struct
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym.env.float_writer as float_writer
from mrsched_gym import acceleration
from mrsched_gym.env.float_writer import FallbackWriter, fallback_write_f32_le

#: Values whose float32 casts differ in kind: exact, rounded (to nearest, ties to even), the
#: smallest normal and subnormal, beyond the range (infinite), signed zeros, infinities, nan.
EDGES = [0.0, -0.0, 1.0, 0.5, 1 / 3, -2 / 3, 0.1, 1 + 2.0 ** -24, 1 + 3 * 2.0 ** -24,
         2.0 ** -126, 2.0 ** -149, 2.0 ** -151, 3.4028234663852886e38, 3.4028235677973366e38,
         1e300, -1e300, float("inf"), float("-inf"), float("nan"), 24.0, -24.0, 3600.5]


def values() -> list[float]:
    rng = np.random.default_rng(7)
    draws = np.concatenate([rng.normal(0, 1, 200), rng.uniform(-1e6, 1e6, 200),
                            np.exp(rng.uniform(-100, 100, 200))])
    return EDGES + draws.tolist()


def numpy_cast(xs: list[float]) -> bytes:
    with np.errstate(over="ignore"):
        return np.asarray(xs, np.float64).astype("<f4").tobytes()


def written(writer_type, write, xs: list[float]) -> bytes:
    """``xs`` written one by one, with a piece of bytes between every ten."""
    w = writer_type()
    for i, x in enumerate(xs):
        if i % 10 == 0:
            w.write(b"\x01\x02\x03\x04")
        write(w, x)
    return w.getvalue()


def with_pieces(xs: list[float]) -> bytes:
    chunks = [(b"\x01\x02\x03\x04" if i % 10 == 0 else b"") + numpy_cast([x])
              for i, x in enumerate(xs)]
    return b"".join(chunks)


def test_the_fallback_writes_numpys_cast():
    xs = values()
    assert written(FallbackWriter, fallback_write_f32_le, xs) == with_pieces(xs)


def librt_strings():
    """librt.strings with the writer (librt >= 0.10; 0.8 and 0.9 have an empty module), or skip."""
    strings = pytest.importorskip("librt.strings")
    if not hasattr(strings, "write_f32_le"):
        pytest.skip("this librt has no write_f32_le (librt < 0.10): the fallback writes")
    return strings


def packs_standard(x: float) -> bool:
    try:
        struct.pack(">f", x)
    except OverflowError:
        return False
    return True


def test_the_fallback_on_a_big_endian_machine_writes_little_endian(monkeypatch):
    """A big-endian machine's native float32 is byte-swapped to little-endian (simulated here:
    the native format made big-endian)."""
    monkeypatch.setattr(float_writer, "_BIG_ENDIAN", True)
    monkeypatch.setattr(float_writer, "_NATIVE_F32", struct.Struct(">f"))
    xs = [x for x in values() if packs_standard(x)]  # ">f" refuses values beyond the range
    assert written(FallbackWriter, fallback_write_f32_le, xs) == with_pieces(xs)


def test_librt_writes_numpys_cast():
    strings = librt_strings()
    xs = values()
    assert written(strings.BytesWriter, strings.write_f32_le, xs) == with_pieces(xs)


#: Observations of a Hadoop-v0 episode (first legal action), hashed: run with and without librt.
EPISODE = """
import hashlib, sys
if sys.argv[1] == "blocked":
    sys.modules["librt"] = None          # import librt fails: the package's fallback writes
import gymnasium as gym
import mrsched_gym, mrsched_gym.env.float_writer as fw
assert (fw.BytesWriter is fw.FallbackWriter) == (sys.argv[1] == "blocked")
env = gym.make("mrsched/Hadoop-v0")
h = hashlib.sha256()
obs, info = env.reset(seed=3)
for step in range(400):
    for key in sorted(obs):
        h.update(obs[key].tobytes())
    obs, r, term, trunc, info = env.step(0 if info["n_candidates"] else env.unwrapped.K)
    if term or trunc:
        break
print(h.hexdigest())
"""


@pytest.mark.skipif(acceleration() != "python",
                    reason="the compiled build needs librt (its writes are compiled in)")
def test_an_env_without_librt_observes_the_same_bytes():
    librt_strings()
    digests = [subprocess.run([sys.executable, "-c", EPISODE, how], capture_output=True,
                              text=True, check=True).stdout.strip()
               for how in ("blocked", "installed")]
    assert digests[0] == digests[1] and len(digests[0]) == 64


def test_observation_arrays_are_fresh_writable_float32_arrays():
    """Each observation's arrays are the env's space's float32 arrays, writable, and shared with
    neither the next observation nor the encoder's caches: writing into one changes nothing
    the env observes later."""
    env, replay = gym.make("mrsched/Hadoop-v0"), gym.make("mrsched/Hadoop-v0")
    try:
        obs, info = env.reset(seed=5)
        seen = []
        for _ in range(60):
            for key, arr in obs.items():
                assert arr.dtype == np.float32 and arr.flags.writeable, key
                assert arr.shape == env.observation_space[key].shape, key
            seen.append({k: v.copy() for k, v in obs.items()})
            kept = obs
            obs, r, term, trunc, info = env.step(0 if info["n_candidates"] else env.unwrapped.K)
            for key in obs:
                assert not np.shares_memory(obs[key], kept[key]), key
                kept[key][...] = -7.0            # scribble on the previous observation
            if term or trunc:
                break
        obs, info = replay.reset(seed=5)
        for before in seen:
            for key in obs:
                np.testing.assert_array_equal(obs[key], before[key])
            obs, r, term, trunc, info = replay.step(
                0 if info["n_candidates"] else replay.unwrapped.K)
    finally:
        env.close()
        replay.close()


def test_a_candidate_row_packed_in_one_call_is_the_row_written_value_by_value():
    """The interpreted build writes a candidate row with one ``struct`` call
    (``job_row.pack_row``); the compiled build value by value (``job_row.write_row``): the same
    bytes, edge values included."""
    from mrsched_gym.env.float_writer import BytesWriter
    from mrsched_gym.env.job_row import ROW_STRUCT, WRITTEN_OUT, JobRow, pack_row, static_row
    xs = values()
    assert ROW_STRUCT.size == 4 * 22
    for k in range(0, len(xs) - 20, 7):
        v = xs[k:k + 20]
        r = JobRow(1, 2, 3, 4, 5, static_row(*v[:12]), 1.0, 2.0, 3.0, v[12], v[13])
        args = (r, *v[14:20], 1.0, -0.5)
        one, packed = BytesWriter(), BytesWriter()
        WRITTEN_OUT(one, *args)
        pack_row(packed, *args)
        assert packed.getvalue() == one.getvalue(), v
        assert packed.getvalue()[8:12] == numpy_cast([v[14]])
