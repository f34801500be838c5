"""A scenario: every section of a world, and the checks across sections."""

from __future__ import annotations

from mrsched_gym.config.cluster import ClusterConfig
from mrsched_gym.config.decisions import DecisionConfig, RewardConfig
from mrsched_gym.config.errors import check
from mrsched_gym.config.fields import Float, FloatPair, Text, section
from mrsched_gym.config.limits import MAX_TIME_LIMIT_S, check_episode_size, check_reduce_capacity
from mrsched_gym.config.services import AvailabilityConfig, InterferenceConfig
from mrsched_gym.config.workload import WorkloadConfig


@section
class Scenario:
    """A complete world definition.

    Attributes:
        name: Scenario name.
        description: One-paragraph description.
        cluster: The cluster.
        interference: Interactive services on shared nodes.
        availability: Dynamic availability.
        workload: The jobs.
        decisions: What the policy decides.
        reward: Reward components and headline metric.
        time_limit_s: Simulated-time limit (truncation).
        stats_window_s: ``(start, end)``: the job statistics (counts, deadline and JCT metrics)
            count only the jobs submitted or completed in ``[start, end)``, the steady state of
            a long run (thesis 5.3.5.1: 7 days simulated, the middle 5 studied, "considering
            only jobs that either start or finish within that time window"; a job's start is its
            submission). ``None``: every job. The reward and the objective's components always
            cover the whole episode, so a headline that is one of them (e.g.
            ``deadline_penalty_h``) does too, while the job statistics beside it cover the
            window; a window that holds no job gives job counts of 0 and undefined (NaN) job
            averages, and ``compare`` says so under its table.
    """

    name: Text = "custom"
    description: Text = ""
    cluster: ClusterConfig = ClusterConfig()
    interference: InterferenceConfig = InterferenceConfig()
    availability: AvailabilityConfig = AvailabilityConfig()
    workload: WorkloadConfig = WorkloadConfig()
    decisions: DecisionConfig = DecisionConfig()
    reward: RewardConfig = RewardConfig()
    time_limit_s: Float = 86400.0
    stats_window_s: FloatPair | None = None

    def __post_init__(self) -> None:
        check(0 < self.time_limit_s <= MAX_TIME_LIMIT_S, "time_limit_s",
               f"must be in (0, {MAX_TIME_LIMIT_S:,.0f}] s (366 days), got {self.time_limit_s!r}")
        if self.stats_window_s is not None:
            start, end = self.stats_window_s
            check(0 <= start < end <= self.time_limit_s, "stats_window_s",
                   f"needs 0 <= start < end <= time_limit_s ({self.time_limit_s:g}), got "
                   f"{list(self.stats_window_s)}")
        check(not (self.availability.generator != "none" and self.availability.mode == "nodes"
                    and self.cluster.n_nodes < 2), "availability.mode",
               "node availability needs at least 2 nodes")
        jobs = self.workload.jobs
        check(self.workload.kind != "jobs" or min(j.arrival_s for j in jobs) < self.time_limit_s,
               "time_limit_s", f"every job of workload.jobs arrives at or after the time limit "
               f"{self.time_limit_s!r} s, so the episode would hold no decision")
        check_reduce_capacity(self)
        check_episode_size(self)

    @property
    def has_shared_nodes(self) -> bool:
        """Whether any node hosts an interactive service."""
        return any(g.kind == "shared" for g in self.cluster.nodes)
