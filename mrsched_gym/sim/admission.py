"""The ``ADMIT`` decision: accept or reject an arrived job (MIMP 5.3).

With ``decisions.admission`` every arrival waits in ``Simulator.admit_queue`` and is posed, in
arrival order, before any other decision. Candidate 0 accepts it; skip rejects it (a rejected
job is still charged, see :func:`~mrsched_gym.sim.accounting.close_books`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrsched_gym.sim.decision import ADMIT, AdmitCandidate, Decision, DecisionPart
from mrsched_gym.sim.jobs import accept, reject

if TYPE_CHECKING:
    from mrsched_gym.config import Scenario
    from mrsched_gym.sim.engine import Simulator


def pose(sim: Simulator) -> Decision | None:
    """The oldest arrival waiting for admission, if any."""
    if not sim.admit_queue:
        return None
    job = sim.jobs[sim.admit_queue[0]]
    return Decision(ADMIT, sim.now, -1, job, (AdmitCandidate(job),))


def apply(sim: Simulator, decision: Decision, action: int) -> None:
    """Accept (action 0) or reject (anything else: skip) the job."""
    job = sim.jobs[sim.admit_queue.pop(0)]
    if action == 0:
        accept(sim, job)
    else:
        reject(sim, job)


def enabled(scenario: Scenario) -> bool:
    """Whether ``scenario`` poses this kind (``decisions.admission``)."""
    return bool(scenario.decisions.admission)


PART = DecisionPart(ADMIT, pose, apply, enabled)
