"""Models of the cluster's surroundings: co-located interactive load
(:mod:`mrsched_gym.models.interference`), the availability f(t)
(:mod:`mrsched_gym.models.availability`) and the trace files feeding them
(:mod:`mrsched_gym.models.traces`)."""
