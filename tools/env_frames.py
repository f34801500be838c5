"""The rendered frame on each env page: one ``rgb_array`` frame of every registered id.

``python tools/env_frames.py`` writes ``docs/figures/envs/<slug>.png`` for every id (the pages of
:mod:`docs_site` show them, as Gymnasium's env pages show their env);
``python tools/env_frames.py --check`` redraws them and exits 1 naming every committed frame
whose pixels differ (or that is missing). A frame is deterministic: seed :data:`SEED`, the
first legal action at every decision (:func:`play`) until :data:`FRACTION` of the time from the
first to the last job arrival has passed (at most :data:`MAX_DECISIONS` decisions), then
``env.render()``.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FRAMES = ROOT / "docs" / "figures" / "envs"
SEED = 0
FRACTION = 0.75
MAX_DECISIONS = 20_000
#: The frames' sentence on the env pages: what the picture is and how it was drawn.
CAPTION = (f'`env.render()` with `render_mode="rgb_array"`: seed {SEED}, the first legal action '
           f"at every decision until {FRACTION:.0%} of the time from the first to the last job "
           "arrival has passed (`python tools/env_frames.py` draws it). One row per job, by "
           "arrival: its map tasks running (its colour), its reduce tasks (paler), its arrival "
           "(black) and deadline (purple); the red line is now.")


def env_slug(env_id: str) -> str:
    """``mrsched/Hadoop-v0`` -> ``hadoop-v0`` (the page's and the frame's file name)."""
    return env_id.split("/", 1)[1].lower()


def frame_path(env_id: str) -> Path:
    """Where the frame of ``env_id`` is committed."""
    return FRAMES / f"{env_slug(env_id)}.png"


def play(env) -> None:
    """Take the first legal action at every decision until :data:`FRACTION` of the arrivals'
    span has passed, the episode ends or :data:`MAX_DECISIONS` decisions were made."""
    sim = env.unwrapped.sim
    arrivals = [j.arrival_s for j in sim.jobs if math.isfinite(j.arrival_s)]
    until = min(arrivals) + FRACTION * (max(arrivals) - min(arrivals))
    for _ in range(MAX_DECISIONS):
        if sim.now >= until:
            return
        mask = env.unwrapped.action_masks()
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(mask)[0]))
        if terminated or truncated:
            return


def frame(env_id: str) -> np.ndarray:
    """The page frame of ``env_id`` (``[H, W, 3]`` uint8)."""
    import gymnasium as gym

    import mrsched_gym  # noqa: F401  (registers the ids)
    env = gym.make(env_id, render_mode="rgb_array")
    try:
        env.reset(seed=SEED)
        play(env)
        return np.asarray(env.render())
    finally:
        env.close()


def png_bytes(image: np.ndarray) -> bytes:
    """``image`` as a PNG without metadata (the same pixels give the same bytes)."""
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="png", optimize=True)
    return buf.getvalue()


def read_png(path: Path) -> np.ndarray:
    """The RGB pixels of a PNG file."""
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the frame of every registered id."""
    from mrsched_gym.registration import ENV_IDS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the committed frames with fresh ones, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for env_id in ENV_IDS:
        image, path = frame(env_id), frame_path(env_id)
        if args.check:
            if not path.is_file() or not np.array_equal(read_png(path), image):
                stale.append(path.relative_to(ROOT).as_posix())
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png_bytes(image))
        print(f"{path.relative_to(ROOT).as_posix()} ({path.stat().st_size // 1024} KB)")
    if stale:
        print(f"error: stale or missing frames (run python tools/env_frames.py): "
              f"{', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
