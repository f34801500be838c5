"""The evaluation harness shared by baselines and agents.

* :func:`run_episode` runs one policy on one scenario and seed and returns every metric of
  :func:`mrsched_gym.env.metrics.episode_metrics` (the one implementation, computed from the episode
  log) plus the return and step count.
* :func:`evaluate` runs policies x scenarios x seeds, in parallel over local processes, with
  common random numbers: every policy sees the same worlds (the seed draws the whole world at
  reset; a policy never changes the scenario). A failing episode (the policy raises, returns a
  non-action, the env fails) is recorded with its policy, scenario, seed and traceback while the
  other episodes finish; :class:`~mrsched_gym.results.EpisodeFailures` then carries both.
  Every episode runs with one BLAS/OpenMP thread (threadpoolctl), so records do not depend on the
  machine's thread settings or on the number of workers.
* Aggregation and result files live in :mod:`mrsched_gym.results` (:func:`summarize`,
  :func:`write_results`, re-exported here).

Policies are named by strings: a baseline name (``"fifo"``), a baseline with parameters
(``"fair:delay=0"``), a trained agent checkpoint (``"agent:path/to/model.zip"`` or any path
ending in ``.zip``; loaded with sb3-contrib's MaskablePPO, or SB3 PPO), a shipped agent
(``"agent:hadoop-v0"``, :mod:`mrsched_gym.agents.pretrained`; run by the numpy forward pass of
:mod:`mrsched_gym.agents.numpy_policy`, no torch needed) or a policy in code
(``"my_policy.py:MyPolicy"``, ``"package.module:Class:key=value"``,
:mod:`mrsched_gym.policy.policy_files`). In Python a policy may also be an object that implements
the contract of :mod:`mrsched_gym.policy.contract` (``decide(decision, view)``, ``act(obs, mask)``,
a function ``(obs, mask)``, an SB3 model or a ``Scheduler``).

This module is the harness's one public face; its parts live in
:mod:`~mrsched_gym.evaluate.policy_specs` (policies by name, fingerprints),
:mod:`~mrsched_gym.evaluate.running` (one episode) and :mod:`~mrsched_gym.evaluate.sweeping`
(many episodes).
"""

from mrsched_gym.evaluate.policy_specs import (
    AGENT,
    BASELINE,
    REFERENCE,
    PolicySpec,
    check_policy,
    file_digest,
    make_policy,
    parse_policy,
    policy_fingerprint,
    policy_role,
    unique_labels,
)
from mrsched_gym.evaluate.running import DEFAULT_ENV, make_env, run_episode, run_task, scenario_of
from mrsched_gym.evaluate.sweeping import (
    check_agent_fits,
    collect_records,
    evaluate,
    in_process_only,
    pinned_reusable,
    reusable_records,
    run_parallel,
    sweep_tasks,
)
from mrsched_gym.results import EpisodeFailures, mean_ci95, metric_names, summarize, write_results

__all__ = ["AGENT", "BASELINE", "DEFAULT_ENV", "REFERENCE", "EpisodeFailures", "PolicySpec",
           "check_agent_fits", "check_policy", "collect_records", "evaluate",
           "file_digest", "in_process_only", "make_env", "make_policy", "mean_ci95",
           "metric_names", "parse_policy", "pinned_reusable", "policy_fingerprint", "policy_role",
           "reusable_records", "run_episode", "run_parallel", "run_task", "scenario_of",
           "summarize", "sweep_tasks", "unique_labels", "write_results"]
