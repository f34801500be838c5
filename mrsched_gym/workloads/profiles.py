"""Job-type profiles: per-task work, per-phase resource demand, interference and accelerator models.

Each profile says where its numbers come from. Seeds are cited by file prefix:

* MIMP (Zhang et al.): TCT_j(r) = a*e^(b*r) + c*e^(d*r) (Eq. 1), NormTCT (Eq. 2),
  Fig. 2 (Pi suffers far more than Sort when the web VM takes CPU). The paper does not publish the
  fitted coefficients, so the ones below are our fits to the *shape* of Fig. 2: NormTCT(0.1) is
  about 7 for Pi and about 2.7 for Sort, and NormTCT(r >= 0.6) is within 10% of 1 for every type.
* MROrchestrator: the six-job suite (Sort, WordCount, PiEst, DistGrep, Twitter, Kmeans)
  and its qualitative resource sensitivities (Section IV; Table I is not legible in our copy,
  so CPU/IO/memory intensities are our reading of the prose: Sort uses CPU in map and memory+I/O in
  reduce, PiEst is CPU bound, DistGrep is I/O bound, Twitter and Kmeans are large and memory heavy).
* Polo's thesis: Table 4.2 (Sort, Combine, Select demand profiles, in % of a TaskTracker),
  Section 3.5.1 (Simulator and Join have irregular task lengths; Montecarlo and Crypt are
  accelerable with up to 25x and 2.5x speed-up).

Task work is in seconds on a reference dedicated node (CPU speed 1.0, no contention). The per-task
mean lengths are representative Hadoop-1 task lengths (tens of seconds to minutes); the trace
calibration from the ALOJA HiBench records replaces them where a scenario asks for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from mrsched_gym.frozen import FrozenDict

#: Resource dimensions of every demand vector, in this order.
RESOURCES: tuple[str, ...] = ("cpu", "io", "mem", "net")


@dataclass(frozen=True)
class JobTypeProfile:
    """Static description of one MapReduce application type.

    Attributes:
        name: Type name as used in configs.
        map_work_s: Mean map task work on a reference node (s).
        map_cv: Coefficient of variation of map task work (lognormal draw).
        reduce_work_s: Mean reduce task work on a reference node (s), excluding the shuffle.
        reduce_cv: Coefficient of variation of reduce task work.
        reduces_per_map: Default number of reduce tasks per map task (0 means map-only).
        map_demand: Fraction of a node's (cpu, io, mem, net) one map task uses.
        reduce_demand: Fraction of a node's (cpu, io, mem, net) one reduce task uses.
        shuffle_mb_per_map: Intermediate data each map produces (MB), pulled by the reducers.
        task_mem_gb: Resident memory of one task (GB); what a suspended task keeps.
        tct: MIMP Eq. 1 coefficients (a, b, c, d) of TCT_j(r).
        accel_speedup: Speed-up per accelerator kind (thesis 3.5.1); missing kinds mean 1x.
        irregular: Irregular task lengths (thesis 3.5.1: Simulator, Join).
        source: Where the numbers come from.
    """

    name: str
    map_work_s: float
    map_cv: float
    reduce_work_s: float
    reduce_cv: float
    reduces_per_map: float
    map_demand: tuple[float, float, float, float]
    reduce_demand: tuple[float, float, float, float]
    shuffle_mb_per_map: float
    task_mem_gb: float
    tct: tuple[float, float, float, float]
    accel_speedup: Mapping[str, float] = field(default_factory=dict)
    irregular: bool = False
    source: str = ""

    def tct_s(self, residual: float) -> float:
        """MIMP Eq. 1: task completion time (arbitrary units) at residual CPU fraction
        ``residual``."""
        a, b, c, d = self.tct
        return a * math.exp(b * residual) + c * math.exp(d * residual)

    def norm_tct(self, residual: float) -> float:
        """MIMP Eq. 2: TCT at ``residual`` normalised by TCT on a dedicated node (r = 1)."""
        return self.tct_s(residual) / self.tct_s(1.0)


def _p(**kw) -> JobTypeProfile:
    kw["accel_speedup"] = FrozenDict(dict(kw.get("accel_speedup", {})))
    return JobTypeProfile(**kw)


# TCT shapes (MIMP Fig. 2 fits, see module docstring). c*e^(d*r) with d=0 is the floor of 1.
_TCT_CPU_HEAVY = (14.0, -8.0, 1.0, 0.0)   # Pi-like: NormTCT(0.1) ~ 7.3
_TCT_CPU = (9.0, -8.0, 1.0, 0.0)          # WordCount-like: NormTCT(0.1) ~ 5.0
_TCT_MIXED = (6.0, -7.5, 1.0, 0.0)        # NormTCT(0.1) ~ 3.8
_TCT_IO = (3.5, -7.0, 1.0, 0.0)           # Sort-like: NormTCT(0.1) ~ 2.7

PROFILES: Mapping[str, JobTypeProfile] = FrozenDict(
    {
        p.name: p
        for p in (
            _p(name="sort", map_work_s=45.0, map_cv=0.15, reduce_work_s=120.0, reduce_cv=0.15,
               reduces_per_map=0.25, map_demand=(0.30, 0.45, 0.25, 0.05),
               reduce_demand=(0.20, 0.50, 0.60, 0.10), shuffle_mb_per_map=64.0, task_mem_gb=1.0,
               tct=_TCT_IO, source="thesis Table 4.2 (demand); MIMP Fig. 2 (TCT, I/O bound)"),
            _p(name="terasort", map_work_s=50.0, map_cv=0.15, reduce_work_s=150.0, reduce_cv=0.15,
               reduces_per_map=0.25, map_demand=(0.30, 0.45, 0.25, 0.05),
               reduce_demand=(0.20, 0.50, 0.60, 0.10), shuffle_mb_per_map=100.0, task_mem_gb=1.0,
               tct=_TCT_IO, source="as sort (thesis Table 4.2); larger records"),
            _p(name="combine", map_work_s=35.0, map_cv=0.15, reduce_work_s=60.0, reduce_cv=0.15,
               reduces_per_map=0.0, map_demand=(0.25, 0.10, 0.10, 0.02),
               reduce_demand=(0.10, 0.10, 0.25, 0.05), shuffle_mb_per_map=0.64, task_mem_gb=0.5,
               tct=_TCT_MIXED, source="thesis Table 4.2; one reduce per job (thesis 4.3.2)"),
            _p(name="select", map_work_s=25.0, map_cv=0.15, reduce_work_s=40.0, reduce_cv=0.15,
               reduces_per_map=0.0, map_demand=(0.15, 0.20, 0.10, 0.02),
               reduce_demand=(0.10, 0.10, 0.25, 0.05), shuffle_mb_per_map=0.64, task_mem_gb=0.5,
               tct=_TCT_IO, source="thesis Table 4.2; one reduce per job (thesis 4.3.2)"),
            _p(name="wordcount", map_work_s=40.0, map_cv=0.10, reduce_work_s=60.0, reduce_cv=0.10,
               reduces_per_map=0.1, map_demand=(0.45, 0.15, 0.15, 0.02),
               reduce_demand=(0.20, 0.20, 0.25, 0.05), shuffle_mb_per_map=8.0, task_mem_gb=0.8,
               tct=_TCT_CPU,
               source="MROrchestrator IV (CPU-heavy map); thesis 3.5.1 (regular lengths)"),
            _p(name="grep", map_work_s=20.0, map_cv=0.10, reduce_work_s=20.0, reduce_cv=0.10,
               reduces_per_map=0.02, map_demand=(0.25, 0.50, 0.10, 0.02),
               reduce_demand=(0.10, 0.10, 0.20, 0.02), shuffle_mb_per_map=0.5, task_mem_gb=0.5,
               tct=_TCT_IO, source="MROrchestrator IV DistGrep (I/O bound, short)"),
            _p(name="piest", map_work_s=60.0, map_cv=0.05, reduce_work_s=10.0, reduce_cv=0.05,
               reduces_per_map=0.0, map_demand=(0.90, 0.02, 0.10, 0.01),
               reduce_demand=(0.20, 0.02, 0.10, 0.01), shuffle_mb_per_map=0.01, task_mem_gb=0.3,
               tct=_TCT_CPU_HEAVY, source="MIMP Fig. 2 (Pi, CPU bound); MROrchestrator IV PiEst"),
            _p(name="join", map_work_s=50.0, map_cv=0.8, reduce_work_s=150.0, reduce_cv=0.8,
               reduces_per_map=0.15, map_demand=(0.30, 0.40, 0.30, 0.05),
               reduce_demand=(0.25, 0.40, 0.40, 0.10), shuffle_mb_per_map=64.0, task_mem_gb=1.2,
               tct=_TCT_MIXED, irregular=True, source="thesis 3.5.1 (irregular task lengths)"),
            _p(name="kmeans", map_work_s=70.0, map_cv=0.15, reduce_work_s=60.0, reduce_cv=0.15,
               reduces_per_map=0.05, map_demand=(0.60, 0.20, 0.30, 0.02),
               reduce_demand=(0.30, 0.10, 0.30, 0.05), shuffle_mb_per_map=4.0, task_mem_gb=1.5,
               tct=_TCT_CPU, source="MROrchestrator IV Kmeans (CPU + memory)"),
            _p(name="twitter", map_work_s=60.0, map_cv=0.2, reduce_work_s=180.0, reduce_cv=0.2,
               reduces_per_map=0.2, map_demand=(0.35, 0.35, 0.35, 0.05),
               reduce_demand=(0.30, 0.30, 0.45, 0.10), shuffle_mb_per_map=40.0, task_mem_gb=1.5,
               tct=_TCT_MIXED, source="MROrchestrator IV Twitter rank (large, memory heavy)"),
            _p(name="simulator", map_work_s=90.0, map_cv=0.8, reduce_work_s=30.0, reduce_cv=0.5,
               reduces_per_map=0.02, map_demand=(0.70, 0.02, 0.20, 0.01),
               reduce_demand=(0.20, 0.05, 0.20, 0.02), shuffle_mb_per_map=0.1, task_mem_gb=1.0,
               tct=_TCT_CPU_HEAVY, irregular=True,
               source="thesis 3.5.1 (negligible input, irregular task lengths)"),
            _p(name="montecarlo", map_work_s=80.0, map_cv=0.05, reduce_work_s=10.0, reduce_cv=0.05,
               reduces_per_map=0.0, map_demand=(0.80, 0.02, 0.10, 0.01),
               reduce_demand=(0.20, 0.02, 0.10, 0.01), shuffle_mb_per_map=0.01, task_mem_gb=0.3,
               tct=_TCT_CPU_HEAVY, accel_speedup={"cell": 25.0},
               source="thesis 3.5.1 (CPU intensive, 25x on Cell/BE accelerators)"),
            _p(name="crypt", map_work_s=60.0, map_cv=0.10, reduce_work_s=10.0, reduce_cv=0.10,
               reduces_per_map=0.0, map_demand=(0.45, 0.45, 0.15, 0.05),
               reduce_demand=(0.10, 0.30, 0.10, 0.05), shuffle_mb_per_map=0.01, task_mem_gb=0.5,
               tct=_TCT_CPU, accel_speedup={"cell": 2.5},
               source="thesis 3.5.1 (data intensive AES, 2.5x on Cell/BE accelerators)"),
        )
    }
)

#: Type names in a fixed order; a type's index is its position here (used in observations).
TYPE_NAMES: tuple[str, ...] = tuple(PROFILES)

#: Accelerator kinds a node may carry: the kinds some job profile is sped up by
#: (``accel_speedup`` keys). Any other name would accelerate nothing, so configs refuse it.
ACCELERATORS: tuple[str, ...] = tuple(sorted({kind for p in PROFILES.values()
                                             for kind in p.accel_speedup}))


def get_profile(name: str) -> JobTypeProfile:
    """Return the profile called ``name`` or raise a ``KeyError`` that lists the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown job type {name!r}; known types: {', '.join(TYPE_NAMES)}") from None
