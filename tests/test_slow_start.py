"""The reduce slow-start rule (baselines/slow_start.py, agents/slow_start.py): which candidates it
holds, the reference rules edf-slowstart and srpt-slowstart, and the shipped generalist playing
under it."""

import gymnasium as gym
import pytest

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.agents.affinity import AffinityDelegate
from mrsched_gym.agents.slow_start import SlowStartDelegate
from mrsched_gym.baselines.affinity import check_min_ratio
from mrsched_gym.baselines.slow_start import check_fraction, held_reduces
from mrsched_gym.evaluate import run_episode
from mrsched_gym.sim.decision import SCHEDULE
from mrsched_gym.sim.state import MAP, REDUCE


def test_held_candidates_are_the_reduces_of_jobs_short_of_the_fraction_of_their_maps():
    """Admission-v1 (Hadoop's slow start, 5%): walking the first candidate, the rule holds
    exactly the reduces whose job has fewer than fraction x n_maps maps done, never a map; and
    it holds every candidate at some decisions."""
    env = gym.make("mrsched/Admission-v1")
    env.reset(seed=3)
    sim = env.unwrapped.sim
    seen = {"held": 0, "reduce free": 0, "all held": 0}
    for _ in range(4000):
        dec = sim.decision
        if dec.kind == SCHEDULE and dec.candidates:
            for fraction in (0.5, 1.0):
                held = held_reduces(sim, fraction)
                expect = [i for i, c in enumerate(dec.candidates) if c.phase == REDUCE
                          and c.job.maps_done < fraction * c.job.n_maps]
                assert held == expect
                assert all(dec.candidates[i].phase != MAP for i in held)
            held = held_reduces(sim, 1.0)
            seen["held"] += bool(held)
            seen["all held"] += len(held) == len(dec.candidates)
            seen["reduce free"] += any(c.phase == REDUCE and i not in held
                                       for i, c in enumerate(dec.candidates))
        else:
            assert held_reduces(sim, 1.0) == []
        _, _, term, trunc, _ = env.step(0)
        if term or trunc:
            break
    assert min(seen.values()) > 5, seen


@pytest.mark.parametrize("check, delegate, what", [
    (check_fraction, SlowStartDelegate, "fraction"),
    (check_min_ratio, AffinityDelegate, "min_ratio")])
def test_both_rules_check_their_share_and_refuse_agents_that_ignore_masks(check, delegate, what,
                                                                          recorder):
    """The slow-start rule's fraction and the affinity mask's ratio are in (0, 1]; a delegate
    narrows a mask, so it refuses an agent that does not act within one."""
    for bad in (0, -0.1, 1.5, float("nan"), True, "1"):
        with pytest.raises(ValueError, match=f"{what} must be a number in"):
            check(bad)
    assert check(1) == 1.0
    with pytest.raises(ValueError, match=what):
        delegate(recorder, 0.0)
    recorder.masked = False
    with pytest.raises(ValueError, match="needs an agent that acts within the env's action mask"):
        delegate(recorder, 1.0)


def test_the_delegate_masks_the_held_reduces_and_leaves_skip_when_all_are_held(recorder):
    env = gym.make("mrsched/Admission-v1")
    obs, _ = env.reset(seed=1)
    sim = env.unwrapped.sim
    inner = recorder
    agent = SlowStartDelegate(inner, 1.0)
    with pytest.raises(ValueError, match="call reset"):
        agent.act(obs, env.unwrapped.action_masks())
    agent.reset(sim)
    skipped = 0
    for _ in range(3000):
        mask = env.unwrapped.action_masks()
        held = held_reduces(sim, 1.0)
        n = len(sim.decision.candidates)
        a = agent.act(obs, mask)
        got = inner.masks[-1]
        assert not got[held].any() and (got[:-1] | mask[:-1] == mask[:-1]).all()
        assert got[:-1].sum() == mask[:-1].sum() - len(held)
        # skip: as the env offers it, and offered when the rule holds every candidate
        assert got[-1] == (mask[-1] or bool(held) and len(held) == n)
        if held and len(held) == n:
            assert a == len(mask) - 1            # only skip is left: the slot idles
            skipped += 1
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert skipped > 5


@pytest.mark.parametrize("rule", ["edf-slowstart", "srpt-slowstart"])
def test_no_reduce_of_a_reference_rule_starts_before_its_job_s_maps_are_done(rule):
    """With fraction 1 every reduce launch comes after its job's last map finished (the task
    log), while the plain rule launches reduces earlier."""
    def early_reduces(policy):
        log = run_episode("mrsched/Admission-v1", policy, 4, keep_log=True)["log"]
        return sum(1 for start, _, j, _, phase, _ in log.task_log
                   if phase == REDUCE and not start >= log.map_finish_s[j])
    from mrsched_gym.baselines import make_baseline
    assert early_reduces(make_baseline(rule)) == 0
    assert early_reduces(make_baseline(rule.split("-")[0])) > 10


def test_the_reference_rules_are_their_order_among_the_candidates_not_held():
    from mrsched_gym.baselines import applicable_baselines, make_baseline
    from mrsched_gym.baselines.common import edf_key, running_by_job
    from mrsched_gym.baselines.simple import SRPTScheduler
    from mrsched_gym.evaluate import scenario_of
    for name in ("edf-slowstart", "srpt-slowstart"):
        assert name not in applicable_baselines(scenario_of("mrsched/Admission-v1"))
        with pytest.raises(ValueError, match="fraction"):
            make_baseline(name, fraction=2)
    keys = {"edf-slowstart": lambda sim, c: edf_key(c),
            "srpt-slowstart": lambda sim, c: SRPTScheduler.key(sim, running_by_job(sim), c)}
    for name, key in keys.items():
        rule = make_baseline(name)
        env = gym.make("mrsched/Admission-v1")
        env.reset(seed=0)
        sim = env.unwrapped.sim
        rule.reset(sim)
        checked = 0
        while True:
            a = rule.decide(sim)
            dec = sim.decision
            if dec.kind == SCHEDULE and dec.candidates:
                held = held_reduces(sim, 1.0)
                ok = [i for i in range(len(dec.candidates)) if i not in held]
                if ok:
                    assert a == min(ok, key=lambda i: key(sim, dec.candidates[i]))
                else:
                    assert a == sim.K
                checked += 1
            _, _, term, trunc, _ = env.step(a)
            if term or trunc:
                break
        assert checked > 100


def test_the_shipped_generalist_plays_under_both_rules_of_its_metadata():
    """agent:general's metadata names the fraction; through the harness its decisions are the
    bare network's with the held reduces and the slow candidates masked, and some differ from
    the bare network's."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.agents.policy import SpeculationDelegate
    from mrsched_gym.agents.pretrained import pretrained_agents
    from mrsched_gym.baselines.affinity import SpeedTable, slow_candidates
    from mrsched_gym.evaluate import make_policy
    info = pretrained_agents()["general"]
    assert info["slow_start"] == 1.0
    pol = make_policy("agent:general")
    assert isinstance(pol, SpeculationDelegate) and isinstance(pol.agent, SlowStartDelegate)
    assert isinstance(pol.agent.agent, AffinityDelegate)
    bare = NumpySetPolicy.load(info["numpy_path"])
    env = gym.make("mrsched/Heterogeneous-v0")
    obs, _ = env.reset(seed=2)
    sim = env.unwrapped.sim
    pol.reset(sim, seed=2)
    bare.reset(sim, seed=2)
    table, differ = SpeedTable(sim), 0
    while True:
        mask = env.unwrapped.action_masks()
        under = mask.copy()
        under[held_reduces(sim, 1.0)] = False
        under[slow_candidates(sim, table, 0.55)] = False
        if not under[:-1].any():            # no candidate left: skip is offered
            under[-1] = True
        a = pol.act(obs, mask)
        assert a == bare.act(obs, under)
        differ += a != bare.act(obs, mask)
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert differ > 5


def test_edf_affinity_with_slow_start_masks_both_rules_and_skips_when_nothing_is_left():
    """``edf-affinity:slow_start=1``: EDF among the candidates neither slow nor held, as the
    generalist's metadata combines the rules (Heterogeneous-v0 has both kinds)."""
    from mrsched_gym.baselines.affinity import SpeedTable, slow_candidates
    from mrsched_gym.baselines.common import edf_key
    from mrsched_gym.evaluate import make_policy
    rule = make_policy("edf-affinity:slow_start=1")
    env = gym.make("mrsched/Heterogeneous-v0")
    env.reset(seed=0)
    sim = env.unwrapped.sim
    rule.reset(sim)
    table, seen = SpeedTable(sim), {"slow": 0, "held": 0, "skip": 0, "skip by both": 0}
    while True:
        a = rule.decide(sim)
        dec = sim.decision
        if dec.kind == SCHEDULE and dec.candidates:
            slow, held = slow_candidates(sim, table, 0.55), held_reduces(sim, 1.0)
            ok = [i for i in range(len(dec.candidates)) if i not in slow and i not in held]
            assert a == (min(ok, key=lambda i: edf_key(dec.candidates[i])) if ok else sim.K)
            seen["slow"] += bool(slow)
            seen["held"] += bool(held)
            seen["skip"] += not ok
            n = len(dec.candidates)        # neither rule alone masks all, together they do
            seen["skip by both"] += not ok and len(slow) < n and len(held) < n
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert min(seen.values()) > 3, seen
