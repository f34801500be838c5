"""Episode accounting: no metric rewards leaving work unfinished or rejected, and the return stays
exactly minus the objective (mrsched_gym.env.metrics, Simulator._close_books)."""

import math

import numpy as np
import pytest

from mrsched_gym.env import MRSchedEnv
from mrsched_gym.evaluate import make_env


def run(env, choose):
    """Run one episode with ``choose(env) -> action``; return (total reward, last info)."""
    total = 0.0
    while True:
        _, r, term, trunc, info = env.step(choose(env))
        total += r
        if term or trunc:
            return total, info


def edf_action(env):
    sim = env.unwrapped.sim
    if sim.kind == 1:                                  # admission: accept
        return 0
    if sim.kind == 2 or not sim.candidates:
        return env.unwrapped.K
    return min(range(len(sim.candidates)), key=lambda i: (sim.candidates[i][0].deadline_s,
                                                          sim.candidates[i][0].jid))


def skip_all(env):
    return env.unwrapped.K                             # admission: reject; schedule: idle


def charged_penalty_h(log):
    """sum_j w_j (y_j - d_j)^+ / 3600 with y_j the finish time or the end-of-episode estimate."""
    done = np.where(np.isnan(log.finish_s), log.est_finish_s, log.finish_s)
    dl = np.isfinite(log.deadline_s) & log.arrived
    return float(np.sum(log.weight[dl] * np.maximum(done[dl] - log.deadline_s[dl], 0.0))) / 3600


@pytest.mark.parametrize("policy", [edf_action, skip_all], ids=["edf", "reject-all"])
def test_rejected_jobs_are_missed_and_charged_and_the_return_is_minus_the_objective(policy):
    env = make_env("mrsched/Admission-v1", {"workload.duration_s": 1200})
    env.reset(seed=3)
    total, info = run(env, policy)
    m, log = info["metrics"], info["episode_log"]
    assert total == pytest.approx(-m["objective"], rel=1e-9, abs=1e-9)
    assert m["deadline_penalty_h"] == pytest.approx(charged_penalty_h(log), rel=1e-9)
    with_dl = np.isfinite(log.deadline_s) & log.arrived
    # every rejected job with a deadline counts as missed
    assert m["deadline_misses"] >= np.sum(log.rejected & with_dl)
    if policy is skip_all:
        assert m["rejections"] == log.arrived.sum() > 0
        assert m["deadline_miss_pct"] == 100.0
        assert m["jobs_finished_pct"] == 0.0


def test_rejecting_everything_costs_more_than_serving():
    """Admission control cannot look good by rejecting: reject-all > EDF on penalty and JCT."""
    out = {}
    for name, policy in (("edf", edf_action), ("reject", skip_all)):
        env = make_env("mrsched/Admission-v1", {"workload.duration_s": 1200})
        env.reset(seed=3)
        out[name] = run(env, policy)[1]["metrics"]
    assert out["reject"]["deadline_penalty_h"] > out["edf"]["deadline_penalty_h"]
    assert out["reject"]["mean_jct_s"] > out["edf"]["mean_jct_s"]
    assert out["reject"]["deadline_miss_pct"] > out["edf"]["deadline_miss_pct"]


def test_unfinished_jobs_at_the_time_limit_are_missed_and_charged_beyond_it():
    env = make_env("mrsched/Hadoop-v0", {"time_limit_s": 1800})
    env.reset(seed=0)
    total, info = run(env, edf_action)
    m, log = info["metrics"], info["episode_log"]
    assert info["episode_over"] and m["truncated"] == 1.0
    unserved = log.arrived & np.isnan(log.finish_s)
    assert unserved.any() and not log.rejected.any()
    assert np.all(log.est_finish_s[unserved] > log.end_s)          # charged past the limit
    assert np.all(np.isnan(log.est_finish_s[~unserved]))
    with_dl = np.isfinite(log.deadline_s)
    assert m["deadline_misses"] >= np.sum(unserved & with_dl)
    assert m["deadline_penalty_h"] == pytest.approx(charged_penalty_h(log), rel=1e-9)
    # the dense lateness up to the limit alone would be smaller
    dense = np.sum(log.weight[with_dl & log.arrived] * np.maximum(
        np.minimum(np.where(np.isnan(log.finish_s), log.end_s, log.finish_s), math.inf)[
            with_dl & log.arrived] - log.deadline_s[with_dl & log.arrived], 0.0)) / 3600
    assert m["deadline_penalty_h"] > dense
    assert total == pytest.approx(-m["objective"], rel=1e-9, abs=1e-9)
    assert m["jobs_finished_pct"] < 100.0


def test_idling_never_has_a_better_jct_than_serving():
    """mean JCT counts unfinished jobs at their estimated completion: idling loses."""
    out = {}
    for name, policy in (("edf", edf_action), ("idle", skip_all)):
        env = make_env("mrsched/Hadoop-v0", {"time_limit_s": 3600})
        env.reset(seed=1)
        out[name] = run(env, policy)[1]["metrics"]
    assert out["idle"]["jobs_finished_pct"] == 0.0
    assert out["idle"]["mean_jct_s"] > out["edf"]["mean_jct_s"]
    assert out["idle"]["deadline_penalty_h"] > out["edf"]["deadline_penalty_h"]
    assert out["idle"]["time_in_system_h"] > out["edf"]["time_in_system_h"]


def test_episode_without_a_decision_is_charged_in_its_only_step():
    """A world that ends before any decision: the closing step's reward is minus the objective."""
    env = MRSchedEnv("hadoop", time_limit_s=60, workload__duration_s=120)
    for seed in range(20):
        _, info = env.reset(seed=seed)
        if info["episode_over"]:
            break
    else:
        pytest.skip("no seed without a decision in the first 60 s")
    _, r, term, trunc, info = env.step(env.K)
    assert trunc or term
    assert r == pytest.approx(-info["metrics"]["objective"], abs=1e-12)


def test_relative_lateness_is_rds_eq1():
    """RDS Eq. 1: sum_j w_j ((y_j - d_j) / (d_j - a_j))^+, unserved jobs at their estimate."""
    env = make_env("mrsched/Hadoop-v0", {"time_limit_s": 3600})
    env.reset(seed=2)
    _, info = run(env, edf_action)
    log = info["episode_log"]
    done = np.where(np.isnan(log.finish_s), log.est_finish_s, log.finish_s)
    expect = 0.0
    for j in np.flatnonzero(np.isfinite(log.deadline_s) & log.arrived):
        late = max(done[j] - log.deadline_s[j], 0.0)
        expect += log.weight[j] * late / (log.deadline_s[j] - log.arrival_s[j])
    assert expect > 0
    assert info["metrics"]["relative_lateness"] == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("env_id, kwargs, policy", [
    ("mrsched/Hadoop-v0", {"time_limit_s": 1800}, "edf"),    # jobs left unsubmitted
    ("mrsched/Admission-v1", {}, "mp+ac"),                    # jobs rejected
])
def test_n_jobs_is_the_workload_and_the_arrived_jobs_add_up(env_id, kwargs, policy):
    """The metrics module's docstring: ``n_jobs`` counts every job of the workload; the
    arrived ones are finished + unfinished + rejected, and the percentages are over them."""
    from mrsched_gym.evaluate import make_policy, run_episode
    res = run_episode(env_id, make_policy(policy), 0, env_kwargs=kwargs)
    m = res["metrics"]
    arrived = m["jobs_finished"] + m["jobs_unfinished"] + m["rejections"]
    assert m["jobs_finished_pct"] == pytest.approx(100 * m["jobs_finished"] / arrived)
    assert m["deadline_miss_pct"] == pytest.approx(100 * m["deadline_misses"] / arrived)
    if kwargs:
        assert arrived < m["n_jobs"]                    # the cut episode left jobs unsubmitted
    else:
        assert arrived == m["n_jobs"] and m["rejections"] > 0


def test_accepted_only_counts_are_mimps_and_add_up_to_the_honest_ones():
    """``accepted_*`` (MIMP 5.3's count) leave the rejected jobs out: with no rejection they are
    the honest metrics; with rejections, the accepted and the rejected jobs' weighted lateness add
    up to ``deadline_penalty_h`` and the misses to ``deadline_misses``."""
    from mrsched_gym.baselines import make_baseline
    from mrsched_gym.env.metrics import job_outcomes
    from mrsched_gym.evaluate import run_episode
    plain = run_episode("mrsched/Admission-v1", make_baseline("mp"), 0)["metrics"]
    assert plain["rejections"] == 0
    assert plain["accepted_deadline_misses"] == plain["deadline_misses"]
    assert plain["accepted_deadline_penalty_h"] == pytest.approx(plain["deadline_penalty_h"])
    out = run_episode("mrsched/Admission-v1", make_baseline("mp+ac"), 0, keep_log=True)
    m, log = out["metrics"], out["log"]
    jobs = job_outcomes(log)
    rej = jobs["has_deadline"] & log.rejected
    assert rej.sum() > 0
    assert m["accepted_deadline_misses"] == m["deadline_misses"] - rej.sum()
    rejected_h = np.sum((log.weight * np.maximum(jobs["late_by_s"], 0.0))[rej]) / 3600.0
    assert m["accepted_deadline_penalty_h"] + rejected_h == pytest.approx(m["deadline_penalty_h"])
    assert m["accepted_deadline_penalty_h"] < m["deadline_penalty_h"]
