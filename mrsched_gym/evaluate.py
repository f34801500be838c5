"""Running policies on scenarios (the shared episode runner; the full harness comes with issue 3)."""

from __future__ import annotations

from typing import Any, Optional

import gymnasium as gym

import mrsched_gym  # noqa: F401  (registers the ids)


def run_episode(env_id: str, scheduler, seed: int, env_kwargs: Optional[dict] = None
                ) -> dict[str, Any]:
    """Run ``scheduler`` (a :class:`~mrsched_gym.baselines.base.Scheduler`) for one episode.

    Returns:
        ``{"metrics": ..., "return": ..., "steps": ...}``; the metrics are those of
        :func:`mrsched_gym.metrics.episode_metrics`.
    """
    env = gym.make(env_id, **(env_kwargs or {}))
    env.reset(seed=seed)
    sim = env.unwrapped.sim
    scheduler.reset(sim, seed=seed)
    total = 0.0
    steps = 0
    while True:
        _, r, term, trunc, info = env.step(scheduler.decide(sim))
        total += r
        steps += 1
        if term or trunc:
            env.close()
            return {"metrics": info["metrics"], "return": total, "steps": steps}
