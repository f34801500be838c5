"""The world is out of a policy's reach (issue 46, item 1): everything an outside policy is
handed (the view, the decision, its candidates, jobs, tasks, node lists, dicts, numpy arrays, the
observation and the mask) is read-only or a copy. Hostile policies try every writable path they
can find, then decide as a polite policy does: the records must be the polite one's."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrsched_gym.evaluate import run_episode
from mrsched_gym.policy.proxies import unwrap
from mrsched_gym.policy.readonly import ReadOnlyError
from mrsched_gym.sim.decision import Decision, DecisionKind
from mrsched_gym.sim.state import Job, Task

ENV = "mrsched/Hadoop-v0"
SHORT = {"workload.duration_s": 400.0}
JUNK = (0, -1.0, 1e9, math.nan, None, "x", [], {})


def edf(decision, view):
    """EDF from the contract alone: what both the polite and the hostile policies decide."""
    if decision.kind == DecisionKind.ADMIT:
        return 0
    if decision.kind != DecisionKind.SCHEDULE or not decision.candidates:
        return view.K
    keys = [(c.job.deadline_s, c.job.jid, c.phase) for c in decision.candidates]
    return keys.index(min(keys))


class Polite:
    name = "polite"

    def decide(self, decision, view):
        return edf(decision, view)


def targets(decision, view):
    """Everything reachable from what the policy was handed, a few levels deep."""
    out = [decision, view, decision.candidates, view.jobs, view.running, view.tasks_on,
           view.res, view.used_map, view.rack, view.task_log, view.avail_f, view.node_forecast,
           view.forecast_window(3), view.scenario]
    for c in decision.candidates:
        out += [c, *c]
        job = getattr(c, "job", None) or getattr(getattr(c, "task", None), "job", None)
        if job is not None:
            out += [job, job.map_work, job.by_node, job.map_state, job.replicas, job.lens,
                    job.susp, job.profile]
    for task in list(view.running.values())[:3]:
        out += [task, task.job, task.demand]
    return out


def jobs_and_tasks_at_each_decision(env, decisions=400):
    """Every live job and task of ``env``'s simulator, with its class, at each of its first
    ``decisions`` decisions (a policy playing the first candidate, or skip)."""
    sim = env.unwrapped.sim
    for _ in range(decisions):
        tasks = [t for on in sim.tasks_on for t in on] + [t for j in sim.jobs for t in j.susp]
        yield from [(j, Job) for j in sim.jobs] + [(t, Task) for t in tasks]
        _, _, term, trunc, _ = env.step(0 if sim.decision.candidates else sim.K)
        if term or trunc:
            return


def attack(obj, how, junk):
    """One attempt to change ``obj``; every refusal is fine, a success must change nothing."""
    names = [n for n in dir(obj) if not n.startswith("__")]
    try:
        if how == "setattr":
            for n in names:
                try:
                    with warnings.catch_warnings():  # numpy deprecates writing some attributes
                        warnings.simplefilter("ignore", DeprecationWarning)
                        setattr(obj, n, junk)
                except Exception:            # noqa: BLE001 - refused, as it should be
                    pass
        elif how == "delattr":
            for n in names:
                try:
                    delattr(obj, n)
                except Exception:            # noqa: BLE001
                    pass
        elif how == "items":
            for key in (0, -1, "x"):
                try:
                    obj[key] = junk
                except Exception:            # noqa: BLE001
                    pass
                try:
                    del obj[key]
                except Exception:            # noqa: BLE001
                    pass
        elif how == "methods":
            for n in ("append", "clear", "pop", "sort", "reverse", "update", "popitem",
                      "extend", "insert", "remove", "fill", "take_map", "requeue_map",
                      "build_locality", "setdefault", "add", "discard", "resize"):
                try:
                    getattr(obj, n)(*([junk] if n not in ("clear", "sort", "reverse",
                                                          "popitem", "pop") else []))
                except Exception:            # noqa: BLE001
                    pass
        elif how == "inplace":
            if isinstance(obj, np.ndarray):
                try:
                    obj.flags.writeable = True
                except Exception:            # noqa: BLE001
                    pass
                try:
                    obj[...] = 0
                except Exception:            # noqa: BLE001
                    pass
            for n in names:
                try:
                    value = getattr(obj, n)
                    value += 1 if isinstance(value, (int, float)) else [junk]
                    setattr(obj, n, value)
                except Exception:            # noqa: BLE001
                    pass
    except Exception:                        # noqa: BLE001
        pass


class Hostile:
    name = "hostile"

    def __init__(self, hows=("setattr", "delattr", "items", "methods", "inplace"), junk=JUNK,
                 every=1):
        self.hows, self.junk, self.every, self.n = hows, junk, every, 0

    def reset(self, view, seed=None):
        for obj in (view, view.jobs, view.rack, view.avail_f):
            for how in self.hows:
                attack(obj, how, self.junk[0])

    def decide(self, decision, view):
        self.n += 1
        if self.n % self.every == 0:
            for i, obj in enumerate(targets(decision, view)):
                for how in self.hows:
                    attack(obj, how, self.junk[(self.n + i) % len(self.junk)])
        return edf(decision, view)


def metrics(policy, seed=0):
    return run_episode(ENV, policy, seed, SHORT)["metrics"]


def same(a, b):
    return all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)


def test_a_policy_that_tries_every_write_changes_nothing():
    polite = metrics(Polite())
    assert same(metrics(Hostile()), polite)
    assert polite["deadline_miss_pct"] == metrics("edf")["deadline_miss_pct"]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(hows=st.lists(st.sampled_from(["setattr", "delattr", "items", "methods", "inplace"]),
                     min_size=1, max_size=3, unique=True),
       junk=st.lists(st.sampled_from(JUNK[:4]) | st.floats() | st.integers(), min_size=1,
                     max_size=3),
       every=st.integers(1, 5), seed=st.integers(0, 3))
def test_attack_shapes_leave_the_records_as_the_polite_ones(hows, junk, every, seed):
    assert same(metrics(Hostile(tuple(hows), tuple(junk), every), seed),
                metrics(Polite(), seed))


def test_writes_raise_a_clear_error_naming_the_attribute():
    seen = {}

    class Probe:
        name = "probe"

        def decide(self, decision, view):
            if decision.candidates and "job" not in seen:
                job = decision.candidates[0].job
                seen["isinstance"] = (isinstance(job, Job), isinstance(decision, Decision))
                seen["same"] = job is view.jobs[job.jid]
                for what, fn in {"job": lambda: setattr(job, "deadline_s", 0.0),
                                 "decision": lambda: setattr(decision, "node", 3),
                                 "view": lambda: setattr(view, "now", 0.0),
                                 "method": lambda: job.take_map(0, 0)}.items():
                    try:
                        fn()
                    except ReadOnlyError as e:
                        seen[what] = str(e)
                try:
                    view.avail_f[0] = 5.0
                except ValueError as e:
                    seen["array"] = str(e)
                try:
                    getattr(view, "engine_internals")  # noqa: B009
                except AttributeError as e:
                    seen["private"] = str(e)
            return edf(decision, view)

    metrics(Probe())
    assert seen["isinstance"] == (True, True) and seen["same"]
    assert "'deadline_s'" in seen["job"] and "read-only" in seen["job"]
    assert "'node'" in seen["decision"] and "'now'" in seen["view"]
    assert "take_map()" in seen["method"] and "read-only" in seen["array"]
    assert "ClusterView" in seen["private"]


class HostileObs:
    """act(obs, mask): writes into the observation and the mask it is handed."""

    name = "hostile-obs"

    def act(self, obs, mask):
        action = int(np.flatnonzero(mask)[0])
        for arr in (*obs.values(), mask):
            arr[...] = 0
        mask[-1] = True
        return action


class PoliteObs:
    name = "polite-obs"

    def act(self, obs, mask):
        return int(np.flatnonzero(mask)[0])


def test_an_observation_policy_writing_into_its_arrays_changes_nothing():
    assert same(metrics(HostileObs()), metrics(PoliteObs()))


@pytest.mark.parametrize("attr", ["deadline_s", "arrival_s", "priority", "weight"])
def test_the_leaderboard_cannot_be_gamed_by_rewriting_deadlines(attr):
    """The example of the issue: a policy that moved every candidate's deadline ahead ranked
    first; now the write is refused and the episode fails, naming the attribute."""

    class Gamer:
        name = "gamer"

        def decide(self, decision, view):
            for c in decision.candidates:
                setattr(c.job, attr, 1e12)
            return edf(decision, view)

    with pytest.raises(ReadOnlyError, match=f"cannot change '{attr}' of a Job") as e:
        metrics(Gamer())
    assert "policy gamer: its decide raised it" in e.value.__notes__[0]


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Preemption-v0",
                                    "mrsched/Stragglers-v0", "mrsched/Admission-v1",
                                    "mrsched/Shared-v1"])
def test_the_fields_read_without_a_wrap_only_ever_hold_immutable_values(env_id):
    """A job's or a task's field in SCALAR_FIELDS is handed to a policy as it is (a C-level
    getter): it must never hold a mutable object, in any world, at any decision."""
    import gymnasium as gym

    from mrsched_gym.policy.proxy_base import SCALAR_FIELDS, SCALARS

    def immutable(v):
        return isinstance(v, SCALARS) or (isinstance(v, tuple)
                                          and all(isinstance(x, SCALARS) for x in v))

    env = gym.make(env_id, **{"workload.duration_s": 600.0})
    env.reset(seed=1)
    checked = 0
    for obj, cls in jobs_and_tasks_at_each_decision(env):
        for name in SCALAR_FIELDS[cls]:
            assert immutable(getattr(obj, name)), (cls.__name__, name)
            checked += 1
    assert checked > 1000
    env.close()


def test_a_proxy_hides_what_it_holds_and_reads_live_values():
    """No attribute of a proxy (private or not) reaches the live object, and a read sees the
    simulator's current value (a proxy is a view, not a copy)."""
    seen = {}

    class Probe:
        name = "probe"

        def decide(self, decision, view):
            if decision.candidates:
                job = decision.candidates[0].job
                seen.setdefault("job", job)
                seen.setdefault("done", []).append(seen["job"].maps_done)
                for name in ("_target", "target", "_guard", "guard", "<target>", "__dict__"):
                    try:
                        value = getattr(job, name)
                    except AttributeError:
                        continue
                    assert not isinstance(value, Job) or type(value) is not Job, name
                assert all(not n.startswith("_") for n in dir(job))
            return edf(decision, view)

    metrics(Probe())
    assert len(set(seen["done"])) > 1


def test_a_method_handed_to_a_policy_reaches_no_live_object():
    """A job's or task's method comes as a read-only method: it gives the same answer as the
    live one, and nothing reachable from it (a closure, ``__self__``, ``__func__``...,
    two levels deep) is a live job, task or simulator."""
    from mrsched_gym.sim.engine import Simulator
    live_types = (Job, Task, Simulator)
    met = []

    def reachable(obj, depth=2):
        for name in dir(obj) + ["__closure__", "__self__", "__func__", "__wrapped__"]:
            try:
                value = getattr(obj, name)
            except Exception:                       # noqa: BLE001 - refused is fine
                continue
            values = [c.cell_contents for c in value] if name == "__closure__" and value \
                else [value]
            for v in values:
                yield v
                if depth > 1 and callable(v):
                    yield from reachable(v, depth - 1)

    class Probe:
        name = "probe"

        def decide(self, decision, view):
            for c in decision.candidates:
                job = c.job
                for name in ("locality_of", "map_locality", "suspended_on"):
                    method = getattr(job, name, None)
                    if method is None or not callable(method):
                        continue
                    met.append(name)
                    for v in reachable(method):
                        assert type(v) not in live_types, (name, v)
                    live = getattr(unwrap(job), name)
                    if name == "suspended_on":
                        assert method(decision.node, c.phase) == live(decision.node, c.phase)
                    elif name == "map_locality":
                        rack = view.rack[decision.node]
                        assert method(decision.node, rack) == live(decision.node, rack)
            return edf(decision, view)

    metrics(Probe())
    assert met


def test_every_property_of_the_protocol_reads_as_a_value_in_either_build():
    """The view's members come from ``ClusterView``'s: a property there (a getset descriptor
    once the compiled build compiles the protocol) must read as a value through the view, never
    as a method (the compiled build once handed ``view.scenario`` out as a function)."""
    import gymnasium as gym

    from mrsched_gym.policy.readonly import VIEW_NAMES, GuardedView
    from mrsched_gym.sim.view import ClusterView

    env = gym.make(ENV)
    env.reset(seed=0)
    view = GuardedView(env.unwrapped.sim)
    properties = [n for n in sorted(VIEW_NAMES)
                  if isinstance(vars(ClusterView)[n], property)
                  or not callable(vars(ClusterView)[n])]
    assert {"scenario", "now", "K"} <= set(properties)
    for name in properties:
        assert not callable(getattr(view, name)) or isinstance(getattr(view, name), type), name
    assert view.scenario.reward.headline == env.unwrapped.headline_metric


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Preemption-v0",
                                    "mrsched/Stragglers-v0", "mrsched/Admission-v1"])
def test_the_fields_a_proxy_copies_equal_the_live_ones_at_every_decision(env_id):
    """A proxy holds a copy of the fields of FROZEN_FIELDS (made with it): at every decision of
    an episode, every job's and running task's copy must equal the live value (the simulator
    never changes them once a policy can see the object)."""
    import gymnasium as gym

    from mrsched_gym.policy.guard import Guard
    from mrsched_gym.policy.proxies import FROZEN_FIELDS

    env = gym.make(env_id, **{"workload.duration_s": 600.0})
    env.reset(seed=2)
    guard = Guard(env.unwrapped.sim)
    checked = 0
    for obj, cls in jobs_and_tasks_at_each_decision(env):
        proxy = guard.wrap(obj)
        for name in FROZEN_FIELDS[cls]:
            live, copy = getattr(obj, name), getattr(proxy, name)
            assert copy == live or (copy != copy and live != live), (cls.__name__, name)
            checked += 1
    assert checked > 1000
    env.close()


def test_a_write_past_the_refusal_changes_the_policys_copy_never_the_simulation():
    """``object.__setattr__`` skips a proxy's refusal: on a copied field it changes the
    policy's own copy, on any other name it fails; the simulator's values stay as they were
    (same records as a policy that takes the same actions without writing)."""

    class First:
        name = "first"

        def decide(self, decision, view):
            return 0 if decision.candidates else view.K

    class Bypass(First):
        name = "bypass"

        def decide(self, decision, view):
            for c in decision.candidates:
                job = getattr(c, "job", None) or c.task.job
                for name in ("deadline_s", "arrival_s", "maps_done", "state", "K"):
                    for obj in (job, view):
                        try:
                            object.__setattr__(obj, name, 0)
                        except (AttributeError, TypeError):
                            pass
            return super().decide(decision, view)

    assert same(metrics(Bypass()), metrics(First()))
