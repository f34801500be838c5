"""Learned schedulers: loading and running them, and training them (``mrsched-gym train``).

The product, by what a user does with it:

* **run a learned policy**: :mod:`~mrsched_gym.agents.policy` (``agent:`` specs, SB3
  checkpoints), :mod:`~mrsched_gym.agents.pretrained` (the shipped agents),
  :mod:`~mrsched_gym.agents.numpy_policy` (inference in numpy, no torch),
  :mod:`~mrsched_gym.agents.observations`, and the rules a policy plays under
  (:mod:`~mrsched_gym.agents.masking`, :mod:`~mrsched_gym.agents.affinity`,
  :mod:`~mrsched_gym.agents.slow_start`);
* **train one**: :mod:`~mrsched_gym.agents.training.train` (the run; its parts ``train_config``,
  ``train_model``, ``train_callbacks``, ``train_files`` and ``learning_curves``), the networks
  (:mod:`~mrsched_gym.agents.networks`, :mod:`~mrsched_gym.agents.set_layers`,
  :mod:`~mrsched_gym.agents.rllib_module`), the numpy rollouts of ``numerics: fast``
  (:mod:`~mrsched_gym.agents.numpy_rollout`, :mod:`~mrsched_gym.agents.training.numpy_export`), the
  pool of randomised worlds (:mod:`~mrsched_gym.agents.training.worlds`) and the imitation phase
  (:mod:`~mrsched_gym.agents.training.imitate`, :mod:`~mrsched_gym.agents.training.imitate_config`):
  the shipped generalist is made by them (``configs/agents/general.yaml``), so a user reproduces it
  with the product alone. Imitation's teachers are policies; other kinds come through the plugin
  point :mod:`~mrsched_gym.agents.training.teachers`.
  :mod:`~mrsched_gym.agents.training.input_driven` is the ``input_driven`` option (variance
  reduction for input-driven envs); :mod:`~mrsched_gym.agents.training.plain_ppo` trains the
  plain-PPO reference of the benchmark.

The research machinery is :mod:`mrsched_gym.agents.research` (the rollout teachers): the
product never imports it (``tests/test_layout.py``); a run reaches it only by naming it in
``imitate.plugins``. Research notes: docs/notes/agents.md.
"""


def __getattr__(name: str):
    """``mrsched_gym.agents.SetPolicy``: the set network for sb3-contrib's MaskablePPO
    (:class:`mrsched_gym.agents.networks.SetPolicy`), and ``mrsched_gym.agents.BestOnValidation``:
    the callback that keeps the best model on validation seeds
    (:class:`mrsched_gym.agents.best_on_validation.BestOnValidation`); imported on first use
    (they need torch and SB3)."""
    if name == "SetPolicy":
        from mrsched_gym.agents.networks import SetPolicy
        return SetPolicy
    if name == "BestOnValidation":
        from mrsched_gym.agents.best_on_validation import BestOnValidation
        return BestOnValidation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
