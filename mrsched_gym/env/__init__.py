"""The Gymnasium environment, in one package: what ``gym.make("mrsched/...")`` returns.

* :mod:`~mrsched_gym.env.environment`: :class:`MRSchedEnv`, the env class (``reset``, ``step``,
  ``action_masks``), a thin adapter over the simulator (:mod:`mrsched_gym.sim`);
* :mod:`~mrsched_gym.env.env_setup`: what the env builds when it is made (its arguments checked,
  the scenario resolved, the spaces); :mod:`~mrsched_gym.env.env_step`: the work of one step;
* the observation: :mod:`~mrsched_gym.env.encoding` (the encoder), its layout and feature table
  (:mod:`~mrsched_gym.env.obs_layout`, :mod:`~mrsched_gym.env.features`), the rows it is made
  of (:mod:`~mrsched_gym.env.node_rows`, :mod:`~mrsched_gym.env.job_row`) and the float32
  writes (:mod:`~mrsched_gym.env.float_writer`);
* :mod:`~mrsched_gym.env.rewards`: the named reward components, and
  :mod:`~mrsched_gym.env.metrics`: the episode metrics they sum to;
* :mod:`~mrsched_gym.env.render`: the text summary, the Gantt chart and the frames;
* :mod:`~mrsched_gym.env.flat` and :mod:`~mrsched_gym.env.flat_step`: the flat variants
  (``mrsched/...-flat``), for RL libraries that know no action mask;
* :mod:`~mrsched_gym.env.vector`: the native vector env ``gymnasium.make_vec`` returns (N
  worlds in one process, with their masks).
"""

from mrsched_gym.env.env_setup import observation_space
from mrsched_gym.env.environment import MRSchedEnv

__all__ = ["MRSchedEnv", "observation_space"]
