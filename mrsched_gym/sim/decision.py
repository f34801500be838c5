"""The decision contract: what the simulator asks a policy, as typed immutable values.

Whenever the simulation needs a choice it stops and poses a :class:`Decision`
(``Simulator.decision``): its kind, the time, the node it concerns and its candidates. Candidate
``i`` is action ``i``; action ``K`` (``decisions.max_candidates``) is **skip**. The kinds:

* ``SCHEDULE``: node ``node`` has a free slot / room for a container. Candidates are
  :class:`ScheduleCandidate` ``(job, phase, locality)``, runnable job-phases, oldest job first,
  maps before reduces, at most K. Choosing one launches a task of that job on that node (the
  best-placed map: node-local, then rack-local, then any; or resumes that job's suspended task on
  that node). Skip leaves the node idle until the next event.
* ``ADMIT``: ``job`` has arrived (admission control enabled). The one candidate,
  :class:`AdmitCandidate` ``(job,)``, accepts it; skip rejects it (MIMP 5.3).
* ``PREEMPT``: the high-priority ``job`` waits for capacity. Candidates are
  :class:`PreemptCandidate` ``(task, primitive)``, victims ranked lowest priority first then most
  recently started (least work lost); skip is ``wait`` (Pastorelli et al.).
* ``SPECULATE`` (``decisions.speculation.enabled``): node ``node`` has room that no pending task
  can use. Candidates are :class:`SpeculateCandidate` ``(task,)``, running tasks without a
  copy, longest estimated time left first (LATE's ranking); choosing one launches a backup copy
  of it on the node, skip launches none (Zaharia et al., OSDI 2008).

Candidates are named tuples: read them by name (``cand.job.jid``, ``cand.phase``); they still
unpack and index like the plain tuples they replaced. Each kind's behaviour (posing and
applying) is one small module registered in :data:`mrsched_gym.sim.engine.DECISION_PARTS`; the
observation's rows for each kind are in :mod:`mrsched_gym.env.encoding`.

Adding a kind (as speculative execution was): a :class:`DecisionKind` member and its candidate
type here; a module with its ``pose``/``apply`` and ``PART``; its entry in ``DECISION_PARTS``
(the position is its priority when several kinds are due); its rows in
``ObservationEncoder.CANDIDATE_ROWS``; the scenario switch that enables it
(:func:`posed_kinds`). The observation's kind one-hot has one entry per kind up to the last one
the scenario can pose, so worlds without the new kind keep their observation shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final, NamedTuple, TypeAlias

from mrsched_gym.config import Scenario
from mrsched_gym.sim.state import Job, Task

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator


class DecisionKind(IntEnum):
    """What a decision asks (an ``IntEnum``: the values are the observation's one-hot slots)."""

    SCHEDULE = 0
    ADMIT = 1
    PREEMPT = 2
    SPECULATE = 3


# ``Final``: the compiled build reads these from C statics instead of the module's dict.
SCHEDULE: Final = DecisionKind.SCHEDULE
ADMIT: Final = DecisionKind.ADMIT
PREEMPT: Final = DecisionKind.PREEMPT
SPECULATE: Final = DecisionKind.SPECULATE
#: The kinds every scenario can pose (the observation's kind one-hot covers at least these).
BASE_KINDS: Final = (SCHEDULE, ADMIT, PREEMPT)
#: Lower-case names by kind value (``info["decision"]``).
DECISION_NAMES: Final = tuple(k.name.lower() for k in DecisionKind)


class Primitive(IntEnum):
    """How a preemption evicts its victim (Pastorelli et al.)."""

    KILL = 0          # its work is lost; it restarts later
    SUSPEND = 1       # it keeps its memory on its node and resumes there


KILL: Final = Primitive.KILL
SUSPEND: Final = Primitive.SUSPEND
#: Lower-case names by primitive value.
PRIMITIVE_NAMES = tuple(p.name.lower() for p in Primitive)


class ScheduleCandidate(NamedTuple):
    """Launch (or resume) a task of ``job`` in ``phase`` on the decision node."""

    job: Job
    #: ``MAP`` or ``REDUCE``.
    phase: int
    #: The best placement of a pending map of the job on the node: ``NODE_LOCAL``,
    #: ``RACK_LOCAL`` or ``OFF_RACK`` (``NODE_LOCAL`` for a reduce or a resume).
    locality: int


class AdmitCandidate(NamedTuple):
    """Accept the arrived ``job``."""

    job: Job


class PreemptCandidate(NamedTuple):
    """Evict the running ``task`` with ``primitive``."""

    task: Task
    primitive: Primitive


class SpeculateCandidate(NamedTuple):
    """Launch a backup copy of the running ``task`` on the decision node (the first copy to
    finish wins; the other is killed and its work counted as wasted)."""

    task: Task


#: Any candidate.
Candidate: TypeAlias = ScheduleCandidate | AdmitCandidate | PreemptCandidate | SpeculateCandidate


class Decision:
    """One pending decision (valid until the next ``Simulator.act``). Immutable: assigning or
    deleting a field raises ``dataclasses.FrozenInstanceError``, as the frozen dataclass it
    replaced did; it compares, hashes, prints, copies and pickles by its fields.

    Written out rather than ``@dataclass(frozen=True)``: a frozen dataclass's generated
    ``__init__`` is interpreted Python even in the compiled build (one per decision, ~3% of a
    step), while ``object.__setattr__`` in this ``__init__`` compiles to direct field stores.

    Attributes:
        kind: What it asks.
        time_s: Simulated time it was posed at.
        node: The node with free capacity (``SCHEDULE``, ``SPECULATE``), else -1.
        job: The arrived job (``ADMIT``) or the waiting high-priority job (``PREEMPT``), else
            ``None``.
        candidates: Candidate ``i`` is action ``i`` (at most K; action K is skip). Empty once
            the episode is over.
    """

    __slots__ = ("kind", "time_s", "node", "job", "candidates")
    __match_args__: ClassVar[tuple[str, ...]] = ("kind", "time_s", "node", "job", "candidates")

    kind: DecisionKind
    time_s: float
    node: int
    job: Job | None
    candidates: tuple[Candidate, ...]

    def __init__(self, kind: DecisionKind, time_s: float, node: int, job: Job | None,
                 candidates: tuple[Candidate, ...]) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "time_s", time_s)
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "job", job)
        object.__setattr__(self, "candidates", candidates)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def as_tuple(self) -> tuple[DecisionKind, float, int, Job | None, tuple[Candidate, ...]]:
        """The fields, in order."""
        return (self.kind, self.time_s, self.node, self.job, self.candidates)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return self.as_tuple() == other.as_tuple()

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        return (f"Decision(kind={self.kind!r}, time_s={self.time_s!r}, node={self.node!r}, "
                f"job={self.job!r}, candidates={self.candidates!r})")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Copies and pickles are rebuilt from the fields (:mod:`mrsched_gym.sim.native`)."""
        return type(self), self.as_tuple()


def always(scenario: Scenario) -> bool:
    """A decision kind every scenario poses (``DecisionPart.enabled``'s default)."""
    return True


class DecisionPart(NamedTuple):
    """One decision kind's behaviour in the simulator (an entry of ``DECISION_PARTS``).

    Attributes:
        kind: The kind.
        pose: The decision of this kind due now, or ``None`` (it may drop stale requests, e.g.
            offered nodes that are now full).
        apply: Carry out ``action`` (a candidate index, or K for skip) on the decision.
        enabled: Whether a scenario can pose this kind at all (the simulator asks only the
            parts of its scenario; default: always).
    """

    kind: DecisionKind
    pose: Callable[[Simulator], Decision | None]
    apply: Callable[[Simulator, Decision, int], None]
    enabled: Callable[[Scenario], bool] = always


def posed_kinds(scenario: Scenario) -> tuple[DecisionKind, ...]:
    """The decision kinds ``scenario`` can pose, in kind order: the base three (a scenario may
    leave admission or preemption off, but their one-hot entries stay for a stable shape) and
    ``SPECULATE`` when ``decisions.speculation.enabled``."""
    if scenario.decisions.speculation.enabled:
        return (*BASE_KINDS, SPECULATE)
    return BASE_KINDS
