"""Registered environment ids: the table of :mod:`mrsched_gym.config.env_ids`
(``mrsched/<Name>-vN`` -> bundled scenario file) registered with Gymnasium, and each id's flat
variant (``mrsched/<Name>-flat-vN``, :mod:`mrsched_gym.env.flat`)."""

from __future__ import annotations

import gymnasium as gym

from mrsched_gym.config import Scenario, load_scenario, with_overrides
from mrsched_gym.config.env_ids import EARLIER_IDS, ENV_IDS, ENV_OVERRIDES
from mrsched_gym.env.flat import flat_id

__all__ = ["EARLIER_IDS", "ENV_IDS", "ENV_OVERRIDES", "FLAT_IDS", "is_registered", "register_envs",
           "scenario_for"]

#: flat variant id -> its base id (:mod:`mrsched_gym.env.flat`), one per id of :data:`ENV_IDS`.
FLAT_IDS = {flat_id(env_id): env_id for env_id in ENV_IDS}


def scenario_for(env_id: str) -> Scenario:
    """The :class:`~mrsched_gym.config.Scenario` behind a registered id (overrides applied): an
    id of :data:`ENV_IDS`, an earlier version (:data:`EARLIER_IDS`) or a flat variant's base."""
    env_id = FLAT_IDS.get(env_id, env_id)
    if env_id in EARLIER_IDS:
        name, overrides = EARLIER_IDS[env_id]
        return with_overrides(load_scenario(name), dict(overrides))
    return with_overrides(load_scenario(ENV_IDS[env_id]), dict(ENV_OVERRIDES.get(env_id, {})))


def is_registered(env_id: object) -> bool:
    """Whether ``env_id`` is one of this package's ids (suite, earlier version or flat)."""
    return isinstance(env_id, str) and (env_id in ENV_IDS or env_id in EARLIER_IDS
                                        or env_id in FLAT_IDS)


#: What ``gymnasium.make_vec(ID, num_envs=N)`` builds for the ids with an action mask: N worlds
#: in one process with their masks (:mod:`mrsched_gym.env.vector`).
VECTOR_ENTRY_POINT = "mrsched_gym.env.vector:make_vector_env"


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` and its flat variant (:data:`FLAT_IDS`;
    idempotent)."""
    for env_id, scenario in ENV_IDS.items():
        overrides = {k.replace(".", "__"): v for k, v in ENV_OVERRIDES.get(env_id, {}).items()}
        kwargs = {"scenario": scenario, **overrides}
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="mrsched_gym.env:MRSchedEnv", kwargs=kwargs,
                         vector_entry_point=VECTOR_ENTRY_POINT)
        if flat_id(env_id) not in gym.registry:
            gym.register(id=flat_id(env_id), entry_point="mrsched_gym.env.flat:make_flat",
                         kwargs=kwargs)
    for env_id, (scenario, old) in EARLIER_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="mrsched_gym.env:MRSchedEnv",
                         vector_entry_point=VECTOR_ENTRY_POINT,
                         kwargs={"scenario": scenario,
                                 **{k.replace(".", "__"): v for k, v in old.items()}})
