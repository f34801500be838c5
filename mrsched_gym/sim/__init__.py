"""The discrete-event simulator: the :class:`~mrsched_gym.sim.engine.Simulator` facade and its
event loop (:mod:`mrsched_gym.sim.engine`, which lists the other parts), the decision contract
(:mod:`mrsched_gym.sim.decision`), the read-only view policies decide from
(:mod:`mrsched_gym.sim.view`), its records (:mod:`mrsched_gym.sim.state`,
:mod:`mrsched_gym.sim.events`) and the episode log (:mod:`mrsched_gym.sim.log`). No Gymnasium
here (``tests/test_layers.py`` checks the layering)."""
