"""The discrete-event simulator: the event loop (:mod:`mrsched_gym.sim.engine`), its records
(:mod:`mrsched_gym.sim.state`, :mod:`mrsched_gym.sim.events`) and the episode log
(:mod:`mrsched_gym.sim.log`). No Gymnasium here (``tests/test_layers.py`` checks the layering)."""
