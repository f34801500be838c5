"""One version of every scenario and trace file per run: :func:`world_fingerprint` of the world
an episode ran in (the resolved scenario and the SHA-256 of every trace it reads), taken when
the episode's env is built, and :class:`WorldPins`, which a sweep fixes at its start and checks
every episode's record against, so that a file edited during a run never mixes versions in one
run's records."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from mrsched_gym.config import Scenario, to_dict
from mrsched_gym.models.traces import trace_digests

Record = dict[str, Any]


def world_fingerprint(scenario: Scenario) -> str:
    """SHA-256 (hex) of a scenario's resolved fields and of the bytes of every trace it reads.

    Raises:
        TraceError: A trace file is missing or unreadable.
    """
    data = to_dict(scenario)
    text = json.dumps({"world": data, "traces": trace_digests(data)}, sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class WorldPins:
    """The world fingerprint of every scenario of a sweep, fixed when the sweep starts.

    Args:
        scenarios: The sweep's scenarios (ids, names or paths).
        env_kwargs: The sweep's scenario overrides.
        make_env: Builds the env of a scenario with overrides (the sweep's own).
    """

    def __init__(self, scenarios: Sequence[str], env_kwargs: dict[str, Any] | None,
                 make_env: Callable[[str, dict[str, Any] | None], Any]) -> None:
        self.expected: dict[str, str] = {}
        for sc in scenarios:
            env = make_env(sc, env_kwargs)
            try:
                self.expected[sc] = world_fingerprint(env.unwrapped.scenario)
            finally:
                env.close()

    def check(self, rec: Record) -> Record:
        """``rec`` itself, or, when its episode ran in another version of its scenario or of a
        trace file than the sweep's start, a failure record saying so (the episode runs again
        on ``--resume``, with the file as it is then, in a run of its own)."""
        fp = rec.get("_world_fp")
        want = self.expected.get(rec.get("scenario", ""))
        if fp is None or want is None or fp == want:
            return rec
        return {"policy": rec["policy"], "scenario": rec["scenario"], "seed": rec["seed"],
                "error": "FileChangedError: the scenario file or a trace file of "
                         f"{rec['scenario']} changed during the run (its content differs from "
                         "the run's start); a run uses one version of every file: run it "
                         "again",
                "traceback": "", "_policy_fp": rec.get("_policy_fp")}


__all__ = ["WorldPins", "world_fingerprint"]
