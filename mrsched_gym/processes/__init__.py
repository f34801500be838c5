"""Processes that cannot end unnoticed, shared by the harness, the policy process and training.

* :mod:`~mrsched_gym.processes.workers`: worker processes whose end is always reported
  (:func:`~mrsched_gym.processes.workers.pool_results`);
* :mod:`~mrsched_gym.processes.lifecycle`: how a run ends (termination signals, workers that end
  with their parent).
"""
