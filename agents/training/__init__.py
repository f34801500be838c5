"""The trainer (``mrsched-gym train``): what makes an agent, apart from what runs one.

* :mod:`~mrsched_gym.agents.training.train`: the run, from a config to a kept model; its parts
  :mod:`~mrsched_gym.agents.training.train_config` (the config),
  :mod:`~mrsched_gym.agents.training.train_checks` (bounds and resume checks),
  :mod:`~mrsched_gym.agents.training.train_model` (the model built),
  :mod:`~mrsched_gym.agents.training.train_callbacks` (validation, checkpoints),
  :mod:`~mrsched_gym.agents.training.train_files` (the run folder) and
  :mod:`~mrsched_gym.agents.training.learning_curves`;
* the pool of randomised worlds (:mod:`~mrsched_gym.agents.training.worlds`) and the
  ``input_driven`` option (:mod:`~mrsched_gym.agents.training.input_driven`);
* the imitation phase (:mod:`~mrsched_gym.agents.training.imitate`,
  :mod:`~mrsched_gym.agents.training.imitate_config`) and its teachers' plugin point
  (:mod:`~mrsched_gym.agents.training.teachers`);
* the numpy weights a shipped agent runs from (:mod:`~mrsched_gym.agents.training.numpy_export`)
  and the plain-PPO reference of the benchmark (:mod:`~mrsched_gym.agents.training.plain_ppo`).

The trainer imports the agents it trains (:mod:`mrsched_gym.agents`); nothing in
:mod:`mrsched_gym.agents` outside this package imports it (``tests/test_layout.py``).
"""
