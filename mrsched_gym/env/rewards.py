"""Named reward components: each step's reward is minus the weighted increments of the integrals.

=========== ======================================================= ===========================
component   increment over a step                                   sums to (metric)
=========== ======================================================= ===========================
jct         (active jobs x dt) / 3600 / n_jobs  (Decima's -int J dt)  ``time_in_system_h``
deadline    (sum of weights of jobs past deadline x dt) / 3600      ``deadline_penalty_h``
            (RDS Eq. 1: sum_j w_j (y_j - d_j)^+, made dense)
slo         (shared nodes over the web SLO x dt) / 3600             ``slo_violation_h``
wasted      work lost to kills and node loss / 3600                 ``wasted_work_h``
idle        (capacity - busy) x dt / 3600                           ``idle_capacity_h``
rejection   jobs rejected at admission                              ``rejections``
=========== ======================================================= ===========================

reward = - sum_c weight_c * increment_c, so the episode return is exactly ``-objective``
(:func:`mrsched_gym.env.metrics.episode_metrics`), the scenario's headline metric when its weight
is 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mrsched_gym.config import REWARD_COMPONENTS
from mrsched_gym.sim.native import mypyc_attr

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator


def totals(I_active: float, I_late: float, I_slo: float, wasted_s: float, I_cap: float,
           I_busy: float, n_rejected: float, n_jobs: int) -> tuple[float, ...]:
    """Every component's total from the simulator's integrals, in :data:`REWARD_COMPONENTS` order.

    The one place these formulas live: the per-step reward and the episode metrics both use it.
    """
    return (
        I_active / 3600.0 / max(n_jobs, 1),
        I_late / 3600.0,
        I_slo / 3600.0,
        wasted_s / 3600.0,
        (I_cap - I_busy) / 3600.0,
        float(n_rejected),
    )


def component_totals(sim: Simulator) -> tuple[float, ...]:
    """Running totals of every component for a live simulator."""
    return totals(sim.I_active, sim.I_late, sim.I_slo, sim.wasted_s, sim.I_cap, sim.I_busy,
                  sim.n_rejected, sim.n_jobs)


@mypyc_attr(allow_interpreted_subclasses=True)
class RewardTracker:
    """Turns the simulator's running totals into per-step rewards and named components.

    Args:
        weights: Weight per component name of :data:`REWARD_COMPONENTS` (missing: 0).
    """

    def __init__(self, weights: Mapping[str, float]) -> None:
        assert len(REWARD_COMPONENTS) == 6, "step() is unrolled over the six components"
        self.weights = tuple(float(weights.get(k, 0.0)) for k in REWARD_COMPONENTS)
        self.last = (0.0,) * len(REWARD_COMPONENTS)

    def reset(self, sim: Simulator) -> None:
        """Start from zero: the first step's reward also carries what accrued before the first
        decision (idle capacity, or the whole episode when it ends before any decision)."""
        self.last = (0.0,) * len(REWARD_COMPONENTS)

    def step(self, sim: Simulator) -> tuple[float, tuple[float, ...]]:
        """Return ``(reward, increments)`` since the previous call."""
        now = component_totals(sim)
        last = self.last
        inc = (now[0] - last[0], now[1] - last[1], now[2] - last[2], now[3] - last[3],
               now[4] - last[4], now[5] - last[5])
        self.last = now
        w = self.weights
        return -(w[0] * inc[0] + w[1] * inc[1] + w[2] * inc[2] + w[3] * inc[3]
                 + w[4] * inc[4] + w[5] * inc[5]), inc
