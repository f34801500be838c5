"""Workloads: job-type profiles (:mod:`mrsched_gym.workloads.profiles`), the synthetic generator
and fixed job lists (:mod:`mrsched_gym.workloads.synthetic`), and trace replay
(:mod:`mrsched_gym.workloads.trace`)."""
