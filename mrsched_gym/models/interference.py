"""Interactive services co-located on shared nodes (MIMP).

* The web VM's CPU demand u(t) (fraction of the node's CPU) is a piecewise-constant series drawn at
  reset: ``constant``, ``diurnal`` (sinusoid with a per-node phase jitter), ``bursty`` (Poisson
  bursts on a base level) or a ``trace`` (scaled to the configured mean).
* Residual capacity for Hadoop is r = max(1 - u, min_share) under both hypervisor policies. MIMP 4.1
  (Table 1) finds that Xen Credit still gives the web VM the CPU *share* it needs (its utilisation
  is 84.8% alone and 91.1% with WordCount); what Credit loses is *timeliness*. So the policies
  differ in the web response time, not in Hadoop's residual capacity. ``min_share`` is the Credit
  weight floor or the background policy's starvation guard (e/p, MIMP 4.2).
* A Hadoop task on a shared node progresses at 1 / NormTCT_j(r) of its dedicated speed
  (MIMP Eq. 1-2; the coefficients are in :mod:`mrsched_gym.workloads.profiles`).
* Web response time: R = R_alone * (1 + k_policy * h), with h in [0, 1] the Hadoop CPU use on the
  node (sum of running tasks' CPU demand, capped at 1). k_credit = 175.5/25 - 1 = 6.02 reproduces
  MIMP Table 1 (25 ms alone, 175.5 ms with WordCount at minimum weight); k_background = 0.05
  reflects MIMP 6.2 ("nearly identical response times to when it is run alone").
"""

from __future__ import annotations

import math

import numpy as np

from mrsched_gym.config import InterferenceConfig
from mrsched_gym.models.traces import TraceError, series_extent


def check_trace(cfg: InterferenceConfig) -> None:
    """Read the web load trace now (if one is set): values are loads (any unit, scaled to
    ``mean``), so they must be >= 0. Errors name the field, the file and the line.

    Raises:
        TraceError: A malformed trace, a negative value, a replayed trace of zeros or a
            ``trace_offset_s`` past the end.
    """
    if not cfg.trace:
        return
    try:
        last, _, hi = series_extent(cfg.trace, (0.0, math.inf), "a load cannot be negative")
    except TraceError as e:
        raise TraceError(f"interference.trace: {e}") from None
    if cfg.load == "trace" and hi <= 0.0:
        raise TraceError(f"interference.trace: {cfg.trace}: every value is 0, so it cannot be "
                         f"scaled to interference.mean ({cfg.mean:g}; it would silently be no "
                         "load); check the trace's column, or set load: constant with mean: 0")
    if cfg.trace_offset_s > last:
        raise TraceError(f"interference.trace_offset_s: {cfg.trace_offset_s:g} is past the last "
                         f"row of {cfg.trace} (time {last:g})")


def check_replayed(cfg: InterferenceConfig, values: np.ndarray | None) -> None:
    """Refuse a load trace whose replayed part (from ``trace_offset_s``, every ``step_s``, over
    the episode: ``values``) is all zeros: it cannot be scaled to ``mean`` and would silently be
    no load, though the file holds load elsewhere.

    Raises:
        TraceError: Every replayed value is 0.
    """
    if cfg.load == "trace" and values is not None and not (values > 0).any():
        raise TraceError(f"interference.trace: {cfg.trace}: every value the episode replays "
                         f"(from trace_offset_s {cfg.trace_offset_s:g}, every step_s "
                         f"{cfg.step_s:g} s) is 0, so it cannot be scaled to interference.mean "
                         f"({cfg.mean:g}); choose another trace_offset_s or step_s")


def web_load_series(cfg: InterferenceConfig, n_shared: int, horizon_s: float,
                    rng: np.random.Generator, trace: np.ndarray | None = None) -> np.ndarray:
    """Draw the web CPU demand of every shared node.

    Args:
        cfg: Interference settings.
        n_shared: Number of shared nodes.
        horizon_s: Simulated time to cover (s).
        rng: Generator for this stream.
        trace: For ``load: trace``, the trace values at ``cfg.step_s`` resolution.

    Returns:
        Array ``[n_shared, n_steps]`` of u in [0, 0.98]; step i covers [i*step_s, (i+1)*step_s).
    """
    n_steps = int(math.ceil(horizon_s / cfg.step_s)) + 1
    t = np.arange(n_steps) * cfg.step_s                                   # [n_steps]
    if n_shared == 0:
        return np.zeros((0, n_steps))
    if cfg.load == "constant":
        u = np.full((n_shared, n_steps), cfg.mean)
    elif cfg.load == "diurnal":
        # Peak around hour 18 (thesis 5.3: transactional peak near 18h), +-1 h jitter per node.
        phase = rng.uniform(-3600.0, 3600.0, size=(n_shared, 1))
        u = cfg.mean + cfg.amplitude * np.sin(2 * np.pi * (t[None, :] - 12 * 3600.0 + phase)
                                              / cfg.period_s)
    elif cfg.load == "bursty":
        u = np.full((n_shared, n_steps), cfg.mean)
        rate_per_step = cfg.step_s / 7200.0                                # one burst / 2 h
        starts = rng.random((n_shared, n_steps)) < rate_per_step
        lengths = rng.geometric(p=min(1.0, cfg.step_s / 1200.0), size=(n_shared, n_steps))
        for i, j in zip(*np.nonzero(starts), strict=False):
            u[i, j:j + lengths[i, j]] += cfg.amplitude
    else:  # trace
        if trace is None or len(trace) == 0:
            raise ValueError("interference.trace: no trace values given")
        base = np.resize(np.asarray(trace, dtype=float), n_steps)
        base = base / max(base.mean(), 1e-12) * cfg.mean
        offsets = rng.integers(0, len(trace), size=n_shared)
        u = np.stack([np.roll(base, -int(o)) for o in offsets])
    if cfg.noise > 0:
        u = u * (1.0 + cfg.noise * rng.standard_normal(u.shape))
    return np.clip(u, 0.0, 0.98)


def residual_capacity(u: float, min_share: float) -> float:
    """Residual CPU fraction left to Hadoop on a shared node (both policies, see module doc)."""
    return max(1.0 - u, min_share)


def response_time_ms(cfg: InterferenceConfig, hadoop_cpu_use: float) -> float:
    """Web response time (ms) given the Hadoop CPU use h on the node (see module doc)."""
    k = cfg.credit_inflation if cfg.policy == "credit" else cfg.background_inflation
    return cfg.response_alone_ms * (1.0 + k * min(1.0, hadoop_cpu_use))
