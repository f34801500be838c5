"""The native vector env: ``gymnasium.make_vec(ID, num_envs=N)`` on any ``mrsched/*`` id.

:class:`MRSchedVectorEnv` runs N worlds in one process. It is Gymnasium's own
:class:`~gymnasium.vector.SyncVectorEnv` (the same batched observations, rewards, flags and
infos, the same autoreset modes, the same ``reset(seed=...)`` seeding: seed ``s`` gives world
``i`` the seed ``s + i``), plus what action-masking learners need:

* :meth:`MRSchedVectorEnv.action_masks` returns the ``(N, K+1)`` boolean array of the actions
  each world offers now, read from the worlds themselves (no copy of an old step's);
* ``info["action_mask"]`` holds the same masks after every ``reset`` and ``step``, batched as
  Gymnasium batches every info key (with its ``"_action_mask"`` flags).

Autoreset follows Gymnasium's documented default, ``AutoresetMode.NEXT_STEP``: the step after a
world's episode ends resets that world (its action is ignored, its reward 0) and returns the new
episode's first observation, mask and info; ``autoreset_mode=`` chooses ``SAME_STEP`` or
``DISABLED`` as for ``SyncVectorEnv``. Each world's episode is the single env's, seed for seed
(``tests/test_vector_env.py``).

Registered for every ``mrsched/*`` id (not the flat variants, which have no mask), so that
``gymnasium.make_vec(ID, num_envs=N)`` returns one (``vectorization_mode="vector_entry_point"``,
Gymnasium's default when an id has one); ``vectorization_mode="sync"`` or ``"async"`` still give
Gymnasium's own. Env arguments go as keywords: ``make_vec(ID, num_envs=8,
**{"cluster.racks": 2})``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from mrsched_gym.env.environment import MRSchedEnv
from mrsched_gym.errors import InputError


class MRSchedVectorEnv(SyncVectorEnv):
    """N ``mrsched`` worlds in one process, with their action masks (see the module).

    Args:
        num_envs: How many worlds (at least 1).
        autoreset_mode: ``"NextStep"`` (the default), ``"SameStep"`` or ``"Disabled"`` (or an
            :class:`~gymnasium.vector.AutoresetMode`), as for ``SyncVectorEnv``.
        copy: Return copies of the batched observations (``SyncVectorEnv``'s ``copy``).
        **env_kwargs: The arguments of every world's :class:`MRSchedEnv` (``scenario=``,
            ``render_mode=``, overrides such as ``**{"cluster.racks": 2}``).

    Raises:
        InputError: ``num_envs`` is not a positive integer, or ``autoreset_mode`` is not a mode.
    """

    def __init__(self, num_envs: int, autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
                 copy: bool = True, **env_kwargs: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise InputError(f"num_envs must be a positive integer, got {num_envs!r}")
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise InputError(f"autoreset_mode must be one of {[m.value for m in AutoresetMode]}, "
                             f"got {autoreset_mode!r}") from None
        first = MRSchedEnv(**env_kwargs)      # the arguments are checked once, here
        makers = [lambda: first] + [lambda: MRSchedEnv(**env_kwargs)] * (int(num_envs) - 1)
        super().__init__(makers, copy=copy, autoreset_mode=mode)

    def action_masks(self) -> np.ndarray:
        """The actions each world offers now: ``bool[num_envs, K+1]``, row ``i`` world ``i``'s
        :meth:`MRSchedEnv.action_masks` (skip last).

        Raises:
            EpisodeStateError: Before the first ``reset()``.
        """
        return np.stack([env.action_masks() for env in self.envs])


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> MRSchedVectorEnv:
    """The ids' ``vector_entry_point``: ``gymnasium.make_vec`` calls it with ``num_envs`` and the
    id's keywords (its scenario and the caller's arguments)."""
    kwargs.pop("max_episode_steps", None)        # Gymnasium passes the spec's; the ids have none
    return MRSchedVectorEnv(num_envs, **kwargs)


__all__ = ["MRSchedVectorEnv", "make_vector_env"]
