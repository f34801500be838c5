"""The sections of a scenario for what the policy decides and how it is rewarded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Annotated, Literal

from mrsched_gym.config.errors import check, in_range, lower_bound
from mrsched_gym.config.fields import AS_LIST, Bool, Float, FloatMap, Int, Text, section
from mrsched_gym.frozen import FrozenDict


@section
class PreemptionConfig:
    """Preemption decisions (Pastorelli et al.).

    Attributes:
        enabled: Offer preemption decisions when a higher-priority job is waiting.
        primitives: Primitives the policy may choose: ``"kill"`` and/or ``"suspend"``;
            ``wait`` is the skip action.
        kill_cleanup_s: Clean-up time that occupies the slot after a kill (Pastorelli et al. IV-C).
        max_suspended_per_node: Suspended tasks a node may hold.
    """

    enabled: Bool = False
    primitives: Annotated[tuple[Literal["kill", "suspend"], ...], AS_LIST] = ("kill", "suspend")
    kill_cleanup_s: Float = 2.0
    max_suspended_per_node: Int = 2

    def __post_init__(self) -> None:
        check(len(self.primitives) >= 1, "primitives", "needs at least one primitive")
        check(len(set(self.primitives)) == len(self.primitives), "primitives",
               f"duplicates in {list(self.primitives)}")
        lower_bound(self.kill_cleanup_s, 0, "kill_cleanup_s")
        lower_bound(self.max_suspended_per_node, 0, "max_suspended_per_node")


@section
class SpeculationConfig:
    """Speculative-execution decisions (LATE, Zaharia et al., OSDI 2008).

    With ``enabled``, a node with room that no pending task can use is offered for a backup
    copy of a running task (``SPECULATE`` decision, :mod:`mrsched_gym.sim.speculation`).
    Which task to copy, and whether to copy at all, is the policy's choice: LATE's
    SpeculativeCap, SlowTaskThreshold and SlowNodeThreshold are parameters of the ``late``
    baseline, not of the cluster.

    Attributes:
        enabled: Offer speculation decisions.
        min_runtime_s: A task is a candidate only after running this long (Hadoop's one-minute
            rule: progress estimates of younger tasks are too noisy to act on).
    """

    enabled: Bool = False
    min_runtime_s: Float = 60.0

    def __post_init__(self) -> None:
        lower_bound(self.min_runtime_s, 0, "min_runtime_s")


@section
class DecisionConfig:
    """What the policy decides.

    Attributes:
        max_candidates: K, the number of candidate slots in the action and observation.
        slow_start: Fraction of maps that must finish before reduces launch (Hadoop: 0.05).
        admission: Offer an accept/reject decision for each arriving job (MIMP 5.3).
        preemption: Preemption decisions.
        speculation: Speculative-execution decisions.
    """

    max_candidates: Int = 8
    slow_start: Float = 0.05
    admission: Bool = False
    preemption: PreemptionConfig = PreemptionConfig()
    speculation: SpeculationConfig = SpeculationConfig()

    def __post_init__(self) -> None:
        check(1 <= self.max_candidates <= 256, "max_candidates",
               f"must be in [1, 256], got {self.max_candidates!r}")
        in_range(self.slow_start, 0.0, 1.0, "slow_start")


#: Reward components and the metric each one sums to over an episode (see mrsched_gym.env.rewards).
COMPONENT_METRICS: Mapping[str, str] = FrozenDict({
    "jct": "time_in_system_h",
    "deadline": "deadline_penalty_h",
    "slo": "slo_violation_h",
    "wasted": "wasted_work_h",
    "idle": "idle_capacity_h",
    "rejection": "rejections",
})
REWARD_COMPONENTS: tuple[str, ...] = tuple(COMPONENT_METRICS)


@section
class RewardConfig:
    """Reward = - sum_c weight_c * increment of component c (see :mod:`mrsched_gym.env.rewards`).

    Attributes:
        weights: Weight per component (``jct``, ``deadline``, ``slo``, ``wasted``, ``idle``,
            ``rejection``). Missing components weigh 0.
        headline: The headline metric (a component's metric name). The episode return equals
            minus ``objective`` = sum_c weight_c * metric_c, which is the headline metric itself
            when the weights are ``{component: 1}``, as on every registered id (tested).
    """

    weights: FloatMap = field(default_factory=lambda: FrozenDict({"deadline": 1.0}))
    headline: Text = "deadline_penalty_h"

    def __post_init__(self) -> None:
        for k in self.weights:
            check(k in REWARD_COMPONENTS, f"weights.{k}",
                   f"unknown component; known: {', '.join(REWARD_COMPONENTS)}")
        check(any(v != 0 for v in self.weights.values()), "weights", "all weights are 0")
        check(self.headline in COMPONENT_METRICS.values(), "headline",
               f"must be one of {', '.join(COMPONENT_METRICS.values())}; got {self.headline!r}")
