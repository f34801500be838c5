"""Dynamic availability f(t) of the capacity offered to MapReduce (RDS; thesis ch. 5).

Generators (all drawn at reset from their own stream, piecewise constant over ``step_s``):

* ``diurnal``: f(t) = 1 - (1 - f_min) * (0.5 + 0.5 sin(...)), lowest when the transactional
  workload peaks near hour 18 (thesis 5.3, Figs. 5.14-5.15).
* ``bursty``: full capacity with dips whose number and depth grow with the level 1-3 (thesis
  Fig. 5.22): 2*level dips a day, depth up to level/3 of (1 - f_min), 15-90 min long.
* ``onoff``: every node alternates exponential up and down periods (spot revocation, failures);
  f(t) is the fraction of nodes up. When failures would leave fewer than f_min of the nodes up,
  randomly chosen down nodes (from the episode's generator) are brought back up.
* ``transactional``: a transactional workload's load trace (e.g. NASA web requests) takes the
  capacity it needs: f(t) = 1 - (1 - f_min) * u(t) / max u, so the load's peak leaves f_min and
  an idle service leaves everything (thesis 5.3.3: each node's capacity is shared between the
  data-store and the TaskTracker; 5.3.5.1: f(t) from a real one-day trace). The ``period_s``
  window of the trace from ``trace_offset_s`` repeats over the episode (a day, a week of days).
* ``trace``: a real series (e.g. Google 2019 CPU usage with ``trace_invert``, PVWatts solar
  output), divided by its maximum over the episode and mapped into [f_min, 1].

In ``nodes`` mode f(t) becomes node up/down states: ``round(f * N)`` nodes are up; which nodes leave
first is a random order drawn at reset. In ``capacity`` mode every node's CPU capacity is f(t).

The forecast is the true future f(t) (the Reverse-Adaptive assumption) times a multiplicative error
drawn at reset (``forecast_noise``), so policies see a fixed, reproducible forecast.
"""

from __future__ import annotations

import math

import numpy as np

from mrsched_gym.config import AvailabilityConfig
from mrsched_gym.models.traces import TraceError, series_extent


def check_trace(cfg: AvailabilityConfig) -> None:
    """Read the availability trace now (if one is set) with the values f(t) can be made of.

    Without ``trace_invert`` values are capacities (>= 0; divided by their maximum). With it they
    are usage fractions in [0, 1] (f = 1 - value): a trace in percent would otherwise pin f(t) at
    ``min_fraction``. Errors name the field, the file and the line.

    Raises:
        TraceError: A malformed trace, a value out of range or a ``trace_offset_s`` past the end.
    """
    if not cfg.trace:
        return
    if cfg.generator == "transactional":
        value_range, rule = (0.0, math.inf), "a transactional load cannot be negative"
    elif cfg.trace_invert:
        value_range, rule = (0.0, 1.0), ("trace_invert reads usage fractions and uses 1 - value; "
                                         "divide a trace in percent by 100")
    else:
        value_range, rule = (0.0, math.inf), "capacity cannot be negative"
    try:
        last, lo, hi = series_extent(cfg.trace, value_range, rule)
    except TraceError as e:
        raise TraceError(f"availability.trace: {e}") from None
    if cfg.generator == "trace" and (lo >= 1.0 if cfg.trace_invert else hi <= 0.0):
        raise TraceError(f"availability.trace: {cfg.trace}: every value is "
                         f"{'1 (full usage)' if cfg.trace_invert else '0'}, so no capacity is "
                         "ever available (it would silently become the min_fraction floor); "
                         "check the trace's column")
    if cfg.trace_offset_s > last:
        raise TraceError(f"availability.trace_offset_s: {cfg.trace_offset_s:g} is past the last "
                         f"row of {cfg.trace} (time {last:g})")


def availability_fraction(cfg: AvailabilityConfig, horizon_s: float, rng: np.random.Generator,
                          n_nodes: int, trace: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray | None]:
    """Draw f(t).

    Returns:
        ``(f, node_up)``: f is ``[n_steps]`` in [f_min, 1]; node_up is ``[n_nodes, n_steps]`` bool
        for the ``onoff`` generator and ``None`` otherwise.
    """
    n_steps = int(math.ceil(horizon_s / cfg.step_s)) + 1
    t = np.arange(n_steps) * cfg.step_s
    lo = cfg.min_fraction
    if cfg.generator == "none":
        return np.ones(n_steps), None
    if cfg.generator == "diurnal":
        f = 1.0 - (1.0 - lo) * (0.5 + 0.5 * np.sin(2 * np.pi * (t - 12 * 3600.0) / cfg.period_s))
        return np.clip(f, lo, 1.0), None
    if cfg.generator == "bursty":
        f = np.ones(n_steps)
        days = max(1.0, horizon_s / 86400.0)
        n_dips = rng.poisson(2 * cfg.level * days)
        starts = rng.uniform(0, horizon_s, size=n_dips)
        lengths = rng.uniform(900.0, 5400.0, size=n_dips)
        depths = rng.uniform(0.3, 1.0, size=n_dips) * (1.0 - lo) * cfg.level / 3.0
        for s, ln, d in zip(starts, lengths, depths, strict=False):
            i0, i1 = int(s // cfg.step_s), int(math.ceil((s + ln) / cfg.step_s))
            f[i0:i1] -= d
        return np.clip(f, lo, 1.0), None
    if cfg.generator == "onoff":
        up = np.ones((n_nodes, n_steps), dtype=bool)
        p_fail = min(1.0, cfg.step_s / cfg.mean_on_s)
        p_back = min(1.0, cfg.step_s / cfg.mean_off_s)
        draws = rng.random((n_nodes, n_steps))
        state = np.ones(n_nodes, dtype=bool)
        min_up = max(1, int(math.ceil(lo * n_nodes)))
        for j in range(1, n_steps):   # over time steps, vectorised over nodes
            flip = np.where(state, draws[:, j] < p_fail, draws[:, j] < p_back)
            new = state ^ flip
            if new.sum() < min_up:     # keep at least f_min of the nodes up: random ones
                down = rng.permutation(np.flatnonzero(~new))
                new[down[: min_up - int(new.sum())]] = True
            state = new
            up[:, j] = state
        return up.mean(axis=0), up
    if trace is None or len(trace) == 0:
        raise ValueError("availability.trace: no trace values given")
    if cfg.generator == "transactional":
        window = max(1, int(round(cfg.period_s / cfg.step_s)))
        load = np.resize(np.asarray(trace[:window], dtype=float), n_steps)
        peak = float(load.max())
        if peak <= 0:
            return np.ones(n_steps), None
        return np.clip(1.0 - (1.0 - lo) * load / peak, lo, 1.0), None
    # trace
    base = np.resize(np.asarray(trace, dtype=float), n_steps)
    if cfg.trace_invert:
        base = 1.0 - base
    base = base / max(base.max(), 1e-12)
    return np.clip(lo + (1.0 - lo) * base, lo, 1.0), None


def node_up_from_fraction(f: np.ndarray, n_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """Turn f(t) into node states: ``round(f * N)`` nodes up, the rest down in a random order.

    Returns:
        ``[n_nodes, n_steps]`` bool.
    """
    return nodes_up(f, rng.permutation(n_nodes))          # order[k] = k-th node to stay up


def nodes_up(f: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``[n_nodes, n_steps]`` node states under f(t): the first ``round(f * N)`` nodes of
    ``order`` (at least one) are up."""
    n_nodes = len(order)
    n_up = np.clip(np.rint(f * n_nodes).astype(int), 1, n_nodes)  # [n_steps]
    rank = np.empty(n_nodes, dtype=int)
    rank[order] = np.arange(n_nodes)
    return rank[:, None] < n_up[None, :]


def node_capacity_forecast(forecast_f: np.ndarray, n_nodes: int, order: np.ndarray | None
                           ) -> np.ndarray:
    """Each node's forecast capacity per availability step, ``[n_nodes, n_steps]`` floats
    (read-only), derived from the forecast f(t) by the rule the simulator applies to the true
    f(t) (thesis 5.3.4.2: each tasktracker's capacity over time "can be derived from a function
    that describes the transactional workload pattern, f(t)").

    ``order`` given (``nodes`` mode from a fraction): 1 while the node is among the first
    ``round(f * N)`` of the episode's leave order (the simulator's mapping from f(t) to nodes,
    fixed at reset), else 0. ``None``: every node's capacity is f(t) (``capacity`` mode; and the
    ``onoff`` generator, whose per-node states are independent draws not in f(t): there f(t) is
    each node's expected availability; without an availability model, 1).
    """
    if order is not None:
        return nodes_up(forecast_f, order).astype(float)
    out = np.broadcast_to(np.asarray(forecast_f, dtype=float), (n_nodes, len(forecast_f)))
    return out


def forecast_series(f: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """The forecast policies see: the true f(t) with a multiplicative error drawn once."""
    if noise == 0:
        return f.copy()
    return np.clip(f * (1.0 + noise * rng.standard_normal(f.shape)), 0.0, 1.0)
