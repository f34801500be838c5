"""Registered environment ids: the table of :mod:`mrsched_gym.config.env_ids`
(``mrsched/<Name>-v0`` -> bundled scenario file) registered with Gymnasium."""

from __future__ import annotations

import gymnasium as gym

from mrsched_gym.config import Scenario, load_scenario, with_overrides
from mrsched_gym.config.env_ids import ENV_IDS, ENV_OVERRIDES

__all__ = ["ENV_IDS", "ENV_OVERRIDES", "register_envs", "scenario_for"]


def scenario_for(env_id: str) -> Scenario:
    """The :class:`~mrsched_gym.config.Scenario` behind a registered id (overrides applied)."""
    return with_overrides(load_scenario(ENV_IDS[env_id]), dict(ENV_OVERRIDES.get(env_id, {})))


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` (idempotent)."""
    for env_id, scenario in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        overrides = {k.replace(".", "__"): v for k, v in ENV_OVERRIDES.get(env_id, {}).items()}
        gym.register(id=env_id, entry_point="mrsched_gym.env:MRSchedEnv",
                     kwargs={"scenario": scenario, **overrides})
