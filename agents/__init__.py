"""Learned schedulers: what a user loads and runs; the trainer apart, in its own package.

* **run a learned policy**: :mod:`~mrsched_gym.agents.policy` (``agent:`` specs, SB3
  checkpoints), :mod:`~mrsched_gym.agents.pretrained` (the shipped agents),
  :mod:`~mrsched_gym.agents.numpy_policy` (inference in numpy, no torch),
  :mod:`~mrsched_gym.agents.flat_agent` (models of the flat variants),
  :mod:`~mrsched_gym.agents.observations`, and the rules a policy plays under
  (:mod:`~mrsched_gym.agents.rules`, :mod:`~mrsched_gym.agents.masking`,
  :mod:`~mrsched_gym.agents.affinity`, :mod:`~mrsched_gym.agents.slow_start`); agent files are
  checked when loaded (:mod:`~mrsched_gym.agents.agent_files`,
  :mod:`~mrsched_gym.agents.agent_snapshot`) and reach the harness as registered kinds
  (:mod:`~mrsched_gym.agents.kinds`);
* **the networks** a user trains with SB3 or RLlib: :class:`SetPolicy`
  (:mod:`~mrsched_gym.agents.networks`, on :mod:`~mrsched_gym.agents.set_layers`; its rollouts
  in numpy, :mod:`~mrsched_gym.agents.numpy_rollout`), the RLlib module
  (:mod:`~mrsched_gym.agents.rllib_module`), :class:`BestOnValidation`, the callback that
  keeps the best model on validation seeds (:mod:`~mrsched_gym.agents.best_on_validation`), and
  the masks of SB3 vector envs without a round trip (:mod:`~mrsched_gym.agents.vec_masks`);
* **train one the project's way** (``mrsched-gym train``): :mod:`mrsched_gym.agents.training`
  (the run and its config, the pool of randomised worlds, the imitation phase, the plain-PPO
  reference): the shipped generalist is made by it (``configs/agents/general.yaml``), so a user
  reproduces it with the product alone. Nothing here imports the trainer.

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
