"""The policy contract for outsiders (mrsched_gym.policy.contract, mrsched_gym.policy.policy_files):
every kind of outside policy runs through run_episode, evaluate and ``mrsched-gym compare``, ranked
beside the baselines with the same records; bad ones fail with one clear error first."""

import json
import textwrap

import numpy as np
import pytest

import mrsched_gym
import mrsched_gym.evaluate as ev
from mrsched_gym.baselines import Scheduler
from mrsched_gym.baselines.simple import FIFOScheduler
from mrsched_gym.cli import main
from mrsched_gym.errors import InputError, InputTypeError
from mrsched_gym.evaluate import evaluate, policy_fingerprint, policy_role, run_episode, running
from mrsched_gym.policy.contract import as_policy, policy_label
from mrsched_gym.sim.decision import DecisionKind

ENV = "mrsched/Hadoop-v0"
SHORT = {"workload.duration_s": 900.0}          # ~22 jobs, ~500 decisions: fast
SKIP = {"policy", "wall_s", "_policy_fp"}


# ------------------------------------------------------------------ the kinds
class EarliestDeadline:
    """EDF written from the contract alone (not calling the baseline)."""

    name = "my-edf"

    def decide(self, decision, view):
        if decision.kind == DecisionKind.ADMIT:
            return 0
        if decision.kind != DecisionKind.SCHEDULE or not decision.candidates:
            return view.K
        keys = [(c.job.deadline_s, c.job.jid, c.phase) for c in decision.candidates]
        return keys.index(min(keys))


class SeededRandom:
    """decide + reset: a random candidate from a generator seeded at reset."""

    def __init__(self):
        self.rng = None
        self.resets = []

    def reset(self, view, seed=None):
        self.resets.append((view.n_nodes, seed))
        self.rng = np.random.default_rng(seed)

    def decide(self, decision, view):
        n = len(decision.candidates)
        return int(self.rng.integers(n)) if n else view.K


class FirstLegal:
    """act(obs, mask): the first legal action."""

    def act(self, obs, mask):
        assert set(obs) >= {"decision", "candidates"}
        return int(np.flatnonzero(mask)[0])


def first_legal(obs, mask):
    """A plain function (obs, mask) -> int."""
    return int(np.flatnonzero(mask)[0])


class MyFifo(FIFOScheduler):
    """A Scheduler subclass that inherits the name "fifo" (labelled by its class name)."""


class OwnScheduler(Scheduler):
    """A Scheduler subclass from scratch, decide(view)."""

    name = "own"

    def decide(self, sim):
        return 0 if sim.decision.candidates else sim.K


def records(policies, seeds=(0, 1), workers=1):
    return evaluate(policies, [ENV], list(seeds), workers=workers, progress=False,
                    env_kwargs=SHORT)


def values(rec):
    return json.dumps({k: v for k, v in rec.items() if k not in SKIP}, sort_keys=True)


def test_every_kind_runs_through_run_episode():
    fifo = run_episode(ENV, "fifo", 3, SHORT)
    edf = run_episode(ENV, "edf", 3, SHORT)
    assert run_episode(ENV, EarliestDeadline(), 3, SHORT)["metrics"] == edf["metrics"]
    for same_as_fifo in (FirstLegal(), first_legal, MyFifo(), OwnScheduler()):
        got = run_episode(ENV, same_as_fifo, 3, SHORT)
        assert got["metrics"] == fifo["metrics"], same_as_fifo
    pol = SeededRandom()
    a = run_episode(ENV, pol, 3, SHORT)["metrics"]
    b = run_episode(ENV, pol, 3, SHORT)["metrics"]
    c = run_episode(ENV, pol, 4, SHORT)["metrics"]
    assert pol.resets == [(pol.resets[0][0], 3), (pol.resets[0][0], 3), (pol.resets[0][0], 4)]
    assert pol.resets[0][0] > 0                      # it got the view
    assert a == b and a != c and a != fifo["metrics"]


def test_labels_are_the_name_else_the_class_name():
    assert policy_label(EarliestDeadline()) == "my-edf"
    assert policy_label(SeededRandom()) == "SeededRandom"
    assert policy_label(first_legal) == "first_legal"
    assert policy_label(MyFifo()) == "MyFifo"
    assert policy_label(OwnScheduler()) == "own"
    assert policy_role("my-edf") == ev.AGENT and policy_role("fifo") == ev.BASELINE


def test_protocols_are_exported_for_typing():
    assert isinstance(EarliestDeadline(), mrsched_gym.RulePolicy)
    assert isinstance(SeededRandom(), mrsched_gym.Resettable)
    assert isinstance(FirstLegal(), mrsched_gym.ObservationPolicy)
    assert isinstance(first_legal, mrsched_gym.ObservationFunction)
    assert not isinstance(FirstLegal(), mrsched_gym.RulePolicy)
    assert mrsched_gym.as_policy is as_policy


def test_evaluate_ranks_objects_beside_the_baselines_with_the_same_records():
    recs = records([EarliestDeadline(), "edf", first_legal, FirstLegal(), MyFifo(),
                    OwnScheduler(), "fifo", SeededRandom()])
    by = {}
    for r in recs:
        by.setdefault(r["policy"], []).append(r)
    assert list(by) == ["my-edf", "edf", "first_legal", "FirstLegal", "MyFifo", "own", "fifo",
                        "SeededRandom"]
    assert [values(r) for r in by["my-edf"]] == [values(r) for r in by["edf"]]
    for same in ("first_legal", "FirstLegal", "MyFifo", "own"):
        assert [values(r) for r in by[same]] == [values(r) for r in by["fifo"]], same
    rows = {r["policy"]: r for r in ev.summarize(recs)}
    assert rows["my-edf"]["deadline_penalty_h_ci95"] == rows["edf"]["deadline_penalty_h_ci95"]


def test_objects_give_the_same_records_in_workers_and_in_process():
    """Each episode runs on a fresh copy (pickled once), so a policy whose state is not reset
    (a counter) gives records that depend neither on the workers nor on the episode order."""

    pols = [SeededRandom(), Counter()]
    one = records(pols, seeds=(0, 1, 2), workers=1)
    two = records(pols, seeds=(0, 1, 2), workers=2)
    assert [values(r) for r in one] == [values(r) for r in two]
    counter = [r for r in one if r["policy"] == "Counter"]
    assert counter[0]["n_jobs"] > 0


class Counter:
    """State that reset does not clear: skips its first 50 decisions ever."""

    def __init__(self):
        self.n = 0

    def decide(self, decision, view):
        self.n += 1
        return view.K if self.n < 50 or not decision.candidates else 0


def test_an_object_that_does_not_pickle_runs_in_this_process():
    def make():
        class Local:                                 # a local class does not pickle
            name = "local-edf"

            def decide(self, decision, view):
                return EarliestDeadline().decide(decision, view)
        return Local()

    def lam(obs, mask):
        return int(np.flatnonzero(mask)[0])
    lam.name = "lam"
    recs = records([make(), "edf", lam, "fifo"], workers=2)
    by = {}
    for r in recs:
        by.setdefault(r["policy"], []).append(values(r))
    assert by["local-edf"] == by["edf"] and by["lam"] == by["fifo"]
    spec = ev.check_policy(make())
    assert spec.payload is None and ev.in_process_only(spec)
    assert policy_fingerprint(spec) != policy_fingerprint(ev.check_policy(make()))


def test_a_maskable_ppo_model_object_gets_the_env_mask():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    env = ev.make_env(ENV, SHORT)
    masked = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64, seed=0,
                         device="cpu")
    plain = PPO("MultiInputPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu")
    assert as_policy(masked).masked and not as_policy(plain).masked
    one = run_episode(ENV, masked, 0, SHORT)
    assert one["steps"] > 0 and one["metrics"]["invalid_actions"] == 0
    # the same untrained network without the mask picks illegal actions (the env skips them)
    assert run_episode(ENV, plain, 0, SHORT)["metrics"]["invalid_actions"] > 0
    recs = records([masked, "fifo"], workers=2)
    assert [r["policy"] for r in recs] == ["MaskablePPO", "MaskablePPO", "fifo", "fifo"]
    assert values(recs[0]) == values(records([masked], seeds=(0,))[0])
    # built for another world: refused before any episode
    with pytest.raises(InputError, match="policy 'MaskablePPO': the model was built for "
                       "observations .*'nodes': \\(12, 10\\).*; scenario 'mrsched/Dedicated-v0' "
                       "gives .*'nodes': \\(20, 10\\)"):
        evaluate([masked], ["mrsched/Dedicated-v0"], [0], progress=False)


# ------------------------------------------------------------------ policy files on the CLI
EDF_FILE = '''
from mrsched_gym.sim.decision import DecisionKind


class FileEDF:
    """EDF from the contract; ``slack`` shifts no decision (a parameter to parse)."""

    def __init__(self, slack=0.0, label=None, reverse=False):
        self.slack = float(slack)
        self.reverse = reverse
        if label:
            self.name = label

    def decide(self, decision, view):
        if decision.kind == DecisionKind.ADMIT:
            return 0
        if decision.kind != DecisionKind.SCHEDULE or not decision.candidates:
            return view.K
        keys = [(c.job.deadline_s + self.slack, c.job.jid, c.phase)
                for c in decision.candidates]
        return keys.index(max(keys) if self.reverse else min(keys))


def first_legal(obs, mask):
    return int(mask.nonzero()[0][0])


class FirstLegalAct:
    def act(self, obs, mask):
        return int(mask.nonzero()[0][0])


from mrsched_gym.baselines import Scheduler  # noqa: E402


class Oldest(Scheduler):
    def decide(self, view):
        return 0 if view.decision.candidates else view.K


NOT_A_POLICY = 3
'''


def compare(tmp_path, *policies, extra=()):
    return main(["compare", "--policies", *policies, "--seeds", "2", "--workers", "1",
                 "--quiet", "--no-plots", "--out", str(tmp_path / "out"),
                 "--set", "workload.duration_s=900", *extra])


def written(tmp_path):
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    return json.loads((folder / "records.json").read_text())


def test_compare_ranks_a_policy_file_beside_edf_with_the_same_record(tmp_path, monkeypatch,
                                                                      capsys):
    f = tmp_path / "my_policy.py"
    f.write_text(EDF_FILE)
    monkeypatch.chdir(tmp_path)
    assert compare(tmp_path, "my_policy.py:FileEDF:slack=0", "edf",
                   "my_policy.py:first_legal", "my_policy.py:FirstLegalAct",
                   "my_policy.py:Oldest", "fifo") == 0
    out = capsys.readouterr().out
    assert "FileEDF:slack=0" in out and "first_legal" in out
    recs = written(tmp_path)
    by = {}
    for r in recs:
        by.setdefault(r["policy"], []).append(values(r))
    assert set(by) == {"FileEDF:slack=0", "edf", "first_legal", "FirstLegalAct", "Oldest",
                       "fifo"}
    assert by["FileEDF:slack=0"] == by["edf"]
    assert by["first_legal"] == by["FirstLegalAct"] == by["Oldest"] == by["fifo"]
    # a parameter that changes decisions changes the record (the parameter reaches the class)
    assert compare(tmp_path, "my_policy.py:FileEDF:reverse=true,label=latest") == 0
    recs = written(tmp_path)
    assert {r["policy"] for r in recs} == {"latest:reverse=True,label=latest"}
    assert [values(r) for r in recs] != by["edf"]


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_a_module_found_on_the_callers_sys_path_loads_in_its_policy_process(tmp_path,
                                                                         monkeypatch, start):
    """A policy process started afresh (as where Ray or TensorFlow is loaded) searches the
    harness's sys.path, as a forked one does."""
    pkg = tmp_path / "mypkg_path"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rules.py").write_text(EDF_FILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MRSCHED_GYM_POLICY_START", start)
    records = evaluate(["mypkg_path.rules:FileEDF"], ["mrsched/Hadoop-v0"], [0], workers=1,
                       progress=False, env_kwargs={"workload.duration_s": 300.0})
    assert [r["policy"] for r in records] == ["FileEDF"]


def test_package_module_class_and_the_plots(tmp_path, monkeypatch):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rules.py").write_text(EDF_FILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["compare", "--policies", "mypkg.rules:FileEDF", "--seeds", "1", "--workers",
                 "1", "--quiet", "--out", str(tmp_path / "out"),
                 "--set", "workload.duration_s=900"]) == 0
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert (folder / "gantt.png").is_file()          # the best policy re-run from its spec
    spec = ev.parse_policy("mypkg.rules:FileEDF")
    assert spec.kind == "code" and spec.label == "FileEDF"
    assert str(ev.policy_fingerprint(spec)).startswith("mypkg.rules:FileEDF:")


def test_an_edited_policy_file_runs_again_on_resume(tmp_path, monkeypatch, capsys):
    f = tmp_path / "my_policy.py"
    f.write_text(EDF_FILE + "\n\nclass Flaky(FileEDF):\n    def reset(self, view, seed=None):\n"
                 "        if seed == 1:\n            raise RuntimeError('boom')\n")
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "runs.txt"             # the episodes run (a policy file's run in a worker)
    real = ev.run_episode

    def logged(*a, **k):
        with log.open("a") as out:
            out.write(f"{type(a[1]).__name__} {a[2]}\n")
        return real(*a, **k)

    def runs():
        text = log.read_text() if log.exists() else ""
        log.unlink(missing_ok=True)
        return sorted(tuple(line.split()) for line in text.splitlines())
    monkeypatch.setattr(running, "run_episode", logged)
    assert compare(tmp_path, "my_policy.py:Flaky", "edf") == 1     # seed 1 failed
    assert "Flaky on mrsched/Hadoop-v0 seed 1" in capsys.readouterr().err
    fp = ev.policy_fingerprint(ev.parse_policy("my_policy.py:Flaky"))
    runs()
    assert compare(tmp_path, "my_policy.py:Flaky", "edf", extra=["--resume"]) == 1
    assert runs() == [("ProcessRule", "1")]                        # unchanged: only the failure
    f.write_text(f.read_text().replace("seed == 1", "seed == 99"))
    assert ev.policy_fingerprint(ev.parse_policy("my_policy.py:Flaky")) != fp
    assert compare(tmp_path, "my_policy.py:Flaky", "edf", extra=["--resume"]) == 0
    assert runs() == [("ProcessRule", "0"), ("ProcessRule", "1")]  # edited: every episode
    recs = written(tmp_path)
    flaky = [values(r) for r in recs if r["policy"] == "Flaky"]
    assert flaky == [values(r) for r in recs if r["policy"] == "edf"]


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("spec, message", [
    ("nowhere.py:X", "policy 'nowhere.py:X': policy file 'nowhere.py' not found"),
    ("my_policy.py", "policy 'my_policy.py': name the class after the file or module, as "
                     "my_policy.py:ClassName"),
    ("my_policy.py:Missing", "policy 'my_policy.py:Missing': my_policy.py has no 'Missing' "
                             "(its classes: FileEDF, FirstLegalAct, Oldest)"),
    ("my_policy.py:NOT_A_POLICY", "policy 'my_policy.py:NOT_A_POLICY': not a policy: a int "
                                  "has no decide(decision, view)"),
    ("my_policy.py:FileEDF:speed=2", "policy 'my_policy.py:FileEDF:speed=2': bad parameter "
                                     "for FileEDF: FileEDF.__init__() got an unexpected "
                                     "keyword argument 'speed'"),
    ("my_policy.py:FileEDF:slack", "policy 'my_policy.py:FileEDF:slack': parameter 'slack' "
                                   "is not key=value"),
    ("my_policy.py:first_legal:a=1", "first_legal is not a class, so it takes no parameters"),
    ("my_policy.py:FileEDF:label=edf", "its name 'edf' is a built-in policy's"),
    ("no_such_pkg.mod:X", "module 'no_such_pkg.mod' cannot be imported"),
])
def test_bad_policy_specs_fail_with_one_line_before_any_episode(tmp_path, monkeypatch, capsys,
                                                                 spec, message):
    (tmp_path / "my_policy.py").write_text(EDF_FILE)
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "needs_dep.py").write_text("import no_such_dependency\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(running, "run_episode", lambda *a, **k: pytest.fail("an episode ran"))
    assert compare(tmp_path, "edf", spec) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("spec, message", [
    ("broken.py:X", "broken.py failed to load: SyntaxError"),
    ("needs_dep.py:X", "needs_dep.py failed to load: ModuleNotFoundError: No module named "
                       "'no_such_dependency'"),
])
def test_a_policy_file_whose_code_fails_to_import_is_that_policys_failure(
        tmp_path, monkeypatch, capsys, spec, message):
    """The file is there but its code fails when imported: the policy fails (phase import,
    traceback in failures.json), edf's records are written, exit 1."""
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "needs_dep.py").write_text("import no_such_dependency\n")
    monkeypatch.chdir(tmp_path)
    assert compare(tmp_path, "edf", spec) == 1
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert len(err) == 1 and err[0].startswith(f"error: policy {spec} failed at import: "
                                               f"{message}"), err
    assert {r["policy"] for r in written(tmp_path)} == {"edf"}
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    failures = json.loads((folder / "failures.json").read_text())
    assert {f["phase"] for f in failures} == {"import"} and len(failures) == 2
    assert all(spec.partition(":")[0] in f["traceback"] for f in failures)


class OneArgDecide:
    def decide(self, view):
        return view.K


class NotSB3:
    def predict(self, x):
        return 0


class BadReset:
    def reset(self):
        pass

    def act(self, obs, mask):
        return 0


@pytest.mark.parametrize("obj, message", [
    (object(), "policy object: not a policy: a object has no decide(decision, view), "
               "act(obs, mask) or predict(obs) method and is not callable as (obs, mask)"),
    (EarliestDeadline, "policy EarliestDeadline: pass an instance (EarliestDeadline(...)), "
                       "not the class"),
    (OneArgDecide(), "policy OneArgDecide: decide(view) cannot be called as "
                     "decide(decision, view) (or subclass mrsched_gym.baselines.Scheduler"),
    (BadReset(), "policy BadReset: reset() cannot be called as reset(view, seed=None)"),
    (lambda obs: 0, "cannot be called as a function (obs, mask) -> int"),
    (NotSB3(), "policy NotSB3: predict(x) cannot be called as predict(obs, deterministic=True) "
               "(an SB3 model's)"),
])
def test_objects_that_fit_no_kind_are_refused_naming_what_is_missing(obj, message):
    with pytest.raises(InputTypeError) as e:
        as_policy(obj)
    assert message in str(e.value)
    with pytest.raises(InputError) as e:
        evaluate([obj], [ENV], [0], progress=False)
    assert message.partition(": ")[2] in str(e.value)
    assert str(e.value).startswith(f"policy {getattr(obj, '__name__', type(obj).__name__)!r}: ")


def test_duplicate_labels_and_baseline_names_are_refused():
    with pytest.raises(InputError, match="policies: my-edf given more than once .*give each "
                       "one a name of its own"):
        records([EarliestDeadline(), EarliestDeadline()])
    clash = EarliestDeadline()
    clash.name = "fifo"
    with pytest.raises(InputError, match="its name 'fifo' is a built-in policy's"):
        records([clash])
    nameless = EarliestDeadline()
    nameless.name = ""
    with pytest.raises(InputError, match="name attribute must be a non-empty string"):
        records([nameless])


def test_benchmark_scores_a_policy_file_as_an_agent(tmp_path, monkeypatch, capsys):
    """``benchmark --agents my_policy.py:FileEDF``: scored beside the baselines (never the
    anchor), with edf's scores, and its file's hash in the suite."""
    (tmp_path / "my_policy.py").write_text(EDF_FILE)
    monkeypatch.chdir(tmp_path)
    assert main(["benchmark", "--ids", "mrsched/Dedicated-v0", "--seeds", "2", "--workers",
                 "1", "--quiet", "--no-plots", "--out", str(tmp_path / "out"), "--agents",
                 "my_policy.py:FileEDF"]) == 0
    data = json.loads((tmp_path / "out" / "benchmark" / "benchmark.json").read_text())
    rows = {r["policy"]: r for r in data["aggregate"]}
    assert "p_improvement" in rows["FileEDF"] and "p_improvement" not in rows["edf"]
    assert rows["FileEDF"]["iqm"] == rows["edf"]["iqm"]
    digest = ev.policy_fingerprint(ev.parse_policy("my_policy.py:FileEDF"))
    assert data["suite"]["agents"]["FileEDF"] == {"fingerprint": digest}
    assert digest.startswith("my_policy.py:FileEDF:") and len(digest.split(":")[-1]) == 16


def test_a_policy_file_imports_its_neighbours_and_an_instance_starts_afresh(tmp_path):
    """The file's folder is importable while it loads; an instance it names runs each episode
    on a fresh copy (its state does not carry over), in workers or not."""
    (tmp_path / "helpers.py").write_text("LIMIT = 50\n")
    (tmp_path / "stateful.py").write_text(textwrap.dedent('''
        from helpers import LIMIT


        class Counter:
            def __init__(self):
                self.n = 0

            def decide(self, decision, view):
                self.n += 1
                return view.K if self.n < LIMIT or not decision.candidates else 0


        COUNTER = Counter()
    '''))
    spec = f"{tmp_path / 'stateful.py'}:COUNTER"
    one = records([spec, "fifo"], seeds=(0, 1), workers=1)
    two = records([spec, "fifo"], seeds=(0, 1), workers=2)
    assert [values(r) for r in one] == [values(r) for r in two]
    fresh = records([Counter()], seeds=(1,))
    assert values(one[1]) == values(fresh[0])           # seed 1 as if it were the first


PPO_FILE = '''
import gymnasium as gym
from sb3_contrib import MaskablePPO

import mrsched_gym  # noqa: F401

MODEL = MaskablePPO("MultiInputPolicy", gym.make("mrsched/Hadoop-v0"), n_steps=64,
                    batch_size=64, seed=0, device="cpu")
MODEL.name = "tiny-ppo"
'''


def test_compare_runs_an_sb3_model_named_in_a_file(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    (tmp_path / "ppo_file.py").write_text(PPO_FILE)
    monkeypatch.chdir(tmp_path)
    assert compare(tmp_path, "ppo_file.py:MODEL", "fifo") == 0
    recs = [r for r in written(tmp_path) if r["policy"] == "tiny-ppo"]
    assert len(recs) == 2 and all(r["invalid_actions"] == 0 for r in recs)
    again = records(["ppo_file.py:MODEL"])              # the same file in Python
    keys = ("seed", "steps", "deadline_penalty_h", "mean_jct_s", "utilisation")
    assert [[r[k] for k in keys] for r in recs] == [[r[k] for k in keys] for r in again]


# ------------------------------------------------------------------ actions held to the contract
class ReturnsOutOfRange:
    """decide: a number past skip (a bug an env would otherwise play as skip)."""

    def decide(self, decision, view):
        return view.K + 5


class ReturnsEmptySlot:
    """decide: the last candidate slot, empty whenever fewer than K candidates wait."""

    def decide(self, decision, view):
        return view.K - 1


class ActReturnsMasked:
    """act: an action the mask does not offer (the last candidate slot)."""

    def act(self, obs, mask):
        return len(mask) - 2


class ReturnsFloat:
    def decide(self, decision, view):
        return 0.0


@pytest.mark.parametrize("policy, expected", [
    (ReturnsOutOfRange(), r"returned action 13 at a \w+ decision with \d+ candidates"),
    (ReturnsEmptySlot(), r"returned action 7 at a \w+ decision with \d candidates \(actions 0-"),
    (ActReturnsMasked(), r"returned action 7 at a decision whose mask offers \["),
    (ReturnsFloat(), r"returned 0.0 \(float\); an action is an integer"),
])
def test_an_illegal_action_of_an_outside_policy_fails_the_episode(policy, expected):
    """An outside rule or observation policy that returns no candidate and no skip fails its
    episode with a message naming the action and the legal ones; never played as skip."""
    from mrsched_gym.policy.contract import PolicyActionError
    with pytest.raises(PolicyActionError, match=expected):
        run_episode(ENV, policy, 0, SHORT)


def test_legal_actions_and_skip_pass_the_check():
    """Skip (view.K) is accepted at every decision, as step() accepts it; numpy integers too."""
    class SkipThenFirst:
        def decide(self, decision, view):
            return np.int64(0) if decision.candidates else view.K

    res = run_episode(ENV, SkipThenFirst(), 0, SHORT)
    assert res["metrics"]["invalid_actions"] == 0


def test_compare_reports_an_illegal_action_as_a_failed_episode(tmp_path, capsys):
    """On the command line the episode is a failure with the message (exit 1), not a record."""
    f = tmp_path / "bad.py"
    f.write_text("class Bad:\n    def decide(self, decision, view):\n        return view.K + 1\n")
    code = main(["compare", "--policies", f"{f}:Bad", "edf", "--seeds", "1", "--workers", "1",
                 "--set", "workload.duration_s=900", "--no-plots", "--quiet",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1 and "returned action 9" in err
