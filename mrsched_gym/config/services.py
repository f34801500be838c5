"""The sections of a scenario for what shares the cluster with MapReduce: interactive services
on shared nodes (interference) and the capacity offered over time (availability)."""

from __future__ import annotations

from typing import Literal

from mrsched_gym.config.errors import check, in_range, lower_bound
from mrsched_gym.config.fields import Bool, Float, Int, Text, section
from mrsched_gym.config.limits import MAX_TIME_LIMIT_S


@section
class InterferenceConfig:
    """Interactive services on shared nodes (MIMP 2, 4).

    Attributes:
        policy: Hypervisor CPU policy: ``"credit"`` (Xen Credit) or ``"background"`` (MIMP MI).
        load: Web CPU demand generator: ``"constant"``, ``"diurnal"``, ``"bursty"`` or ``"trace"``.
        mean: Mean web CPU demand u as a fraction of the node's CPU.
        amplitude: Diurnal amplitude (fraction of CPU) or burst height (bursty).
        period_s: Period of the diurnal cycle (s).
        step_s: Resolution of the piecewise-constant load series (s).
        noise: Standard deviation of per-step multiplicative noise.
        trace: Path or bundled name of a load trace (``load: trace``), e.g. ``nasa-http-1995``;
            scaled so its mean over the episode window is ``mean``. A relative path in a
            scenario file is relative to that file's folder.
        trace_offset_s: Where in the trace the episode starts (s).
        min_share: Starvation guard of the background policy (e/p, MIMP 4.2) and minimum credit
            share of the Hadoop VM.
        response_alone_ms: Web response time alone (MIMP Table 1: 25 ms).
        credit_inflation: Response-time inflation at full Hadoop CPU use under credit
            (MIMP Table 1: 175.5/25 - 1 = 6.02).
        background_inflation: The same under the background policy (MIMP 6.2: near alone).
        slo_ms: Response-time service-level objective.
    """

    policy: Literal["credit", "background"] = "background"
    load: Literal["constant", "diurnal", "bursty", "trace"] = "diurnal"
    mean: Float = 0.4
    amplitude: Float = 0.3
    period_s: Float = 86400.0
    step_s: Float = 300.0
    noise: Float = 0.05
    trace: Text | None = None
    trace_offset_s: Float = 0.0
    min_share: Float = 0.02
    response_alone_ms: Float = 25.0
    credit_inflation: Float = 6.02
    background_inflation: Float = 0.05
    slo_ms: Float = 100.0

    def __post_init__(self) -> None:
        in_range(self.mean, 0.0, 1.0, "mean")
        in_range(self.amplitude, 0.0, 1.0, "amplitude")
        lower_bound(self.period_s, 1, "period_s")
        in_range(self.step_s, 0.0, MAX_TIME_LIMIT_S, "step_s", lo_open=True)
        in_range(self.noise, 0.0, 1.0, "noise")
        check(self.load != "trace" or bool(self.trace), "trace", "required when load is 'trace'")
        lower_bound(self.trace_offset_s, 0, "trace_offset_s")
        in_range(self.min_share, 0.0, 1.0, "min_share")
        lower_bound(self.response_alone_ms, 0, "response_alone_ms", lo_open=True)
        lower_bound(self.credit_inflation, 0, "credit_inflation")
        lower_bound(self.background_inflation, 0, "background_inflation")
        lower_bound(self.slo_ms, 0, "slo_ms", lo_open=True)


@section
class AvailabilityConfig:
    """Capacity offered to MapReduce over time, f(t) (RDS, thesis ch. 5).

    Attributes:
        generator: ``"none"``, ``"diurnal"``, ``"bursty"``, ``"onoff"``, ``"trace"`` or
            ``"transactional"`` (a transactional workload's load trace takes capacity:
            f = 1 - (1 - min_fraction) x load / peak load, thesis 5.3.3 and 5.3.5.1).
        mode: ``"nodes"`` (nodes leave and join; running work on a leaving node is lost) or
            ``"capacity"`` (every node's CPU capacity is scaled by f(t)).
        step_s: Resolution of f(t) (s).
        min_fraction: Lowest value of f(t).
        period_s: Diurnal period (s); ``transactional``: the length of the trace window (from
            ``trace_offset_s``) that repeats over the episode (thesis 5.3.5.1: one day).
        level: Burstiness level 1-3 (thesis Fig. 5.22: more and larger dips at higher levels).
        mean_on_s: On/off generator: mean up time of a node (s).
        mean_off_s: On/off generator: mean down time of a node (s).
        trace: Path or bundled name of an availability trace (``generator: trace``), e.g.
            ``google-2019-cpu`` or ``pvwatts-golden``; values are divided by their maximum over
            the episode window and mapped into [min_fraction, 1] (a trace that is 0 throughout is
            refused). A relative path in a scenario file is relative to that file's folder.
        trace_offset_s: Where in the trace the episode starts (s).
        trace_invert: Use 1 - value (a usage trace whose complement is the free capacity).
        forecast_steps: Length of the forecast window exposed to policies (steps of ``step_s``).
        forecast_noise: Std of multiplicative forecast error (0 = the true future f(t)).
    """

    generator: Literal["none", "diurnal", "bursty", "onoff", "trace", "transactional"] = "none"
    mode: Literal["nodes", "capacity"] = "nodes"
    step_s: Float = 300.0
    min_fraction: Float = 0.5
    period_s: Float = 86400.0
    level: Int = 1
    mean_on_s: Float = 7200.0
    mean_off_s: Float = 900.0
    trace: Text | None = None
    trace_offset_s: Float = 0.0
    trace_invert: Bool = False
    forecast_steps: Int = 8
    forecast_noise: Float = 0.0

    def __post_init__(self) -> None:
        in_range(self.step_s, 0.0, MAX_TIME_LIMIT_S, "step_s", lo_open=True)
        in_range(self.min_fraction, 0.0, 1.0, "min_fraction", lo_open=True)
        lower_bound(self.period_s, 1, "period_s")
        check(self.level in (1, 2, 3), "level", f"must be 1, 2 or 3, got {self.level}")
        lower_bound(self.mean_on_s, 0, "mean_on_s", lo_open=True)
        lower_bound(self.mean_off_s, 0, "mean_off_s", lo_open=True)
        check(self.generator not in ("trace", "transactional") or bool(self.trace), "trace",
               f"required when generator is {self.generator!r}")
        check(not (self.generator == "transactional" and self.trace_invert), "trace_invert",
               "a transactional trace is read as the load taking capacity already")
        lower_bound(self.trace_offset_s, 0, "trace_offset_s")
        check(1 <= self.forecast_steps <= 256, "forecast_steps",
               f"must be in [1, 256], got {self.forecast_steps!r}")
        in_range(self.forecast_noise, 0.0, 2.0, "forecast_noise")
