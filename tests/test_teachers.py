"""The plugin point of imitation teachers (``agents/training/teachers.py``): the trainer reaches
teachers that are not policies only through modules a run names in ``imitate.plugins``; the research
package registers the rollout teachers that way, and the trainer never loads it by itself."""

import subprocess
import sys

import pytest

from mrsched_gym.agents.training.teachers import (
    TeacherKind,
    base_policy,
    load_plugins,
    register_teacher_kind,
    teacher_kind,
)


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_registered_kind_is_found_by_its_prefix_and_built_over_its_base():
    made = []
    kind = TeacherKind("probe-teacher:", lambda spec, make_policy, pool: made.append(
        (spec, make_policy(base_policy(spec)), pool)) or "teacher")
    register_teacher_kind(kind)
    assert teacher_kind("probe-teacher:edf") is kind and teacher_kind("edf") is None
    assert base_policy("probe-teacher:agent:hadoop-v0") == "agent:hadoop-v0"
    assert base_policy("edf") == "edf"
    from mrsched_gym.agents.training.imitate import make_teacher
    assert make_teacher("probe-teacher:edf", pool="P") == "teacher"
    assert made[0][0] == "probe-teacher:edf" and made[0][2] == "P"
    assert type(made[0][1]).__name__ == type(make_teacher("edf")).__name__


def test_a_prefix_must_end_with_a_colon():
    with pytest.raises(ValueError, match="ends with ':'"):
        register_teacher_kind(TeacherKind("rollout", lambda *a: None))


def test_an_unimportable_plugin_is_named():
    with pytest.raises(ValueError, match=r"imitate.plugins: cannot import 'no_such_mod_xyz'"):
        load_plugins(["no_such_mod_xyz"])


def test_the_trainer_does_not_load_the_research_package():
    """Loading and checking a config with an imitation section (policy teachers) imports no
    research module."""
    pytest.importorskip("sb3_contrib")
    code = ("import sys\n"
            "from mrsched_gym.agents.training.train import load_config\n"
            "load_config('general')\n"
            "print(sorted(m for m in sys.modules if m.startswith('mrsched_gym.agents.research')))")
    assert _run(code) == "[]"


def test_a_rollout_teacher_needs_the_research_plugin():
    """``rollout:edf`` without ``imitate.plugins`` is refused with the hint; with the research
    package named there it is a teacher (fresh processes: registration is per process)."""
    pytest.importorskip("sb3_contrib")
    base = ("from mrsched_gym.agents.training.train import load_config\n"
            "from mrsched_gym.config import ConfigError\n"
            "ic = {'teachers': {'default': 'rollout:edf'}, 'rounds': 1, 'steps_per_round': 8%s}\n"
            "try:\n"
            "    c = load_config('hadoop_set', imitate=ic)\n"
            "    print('ok', c.imitate.plugins)\n"
            "except ConfigError as e:\n"
            "    print('error', e)\n")
    out = _run(base % "")
    assert out.startswith("error") and "imitate.teachers.default" in out \
        and "imitate.plugins" in out and "mrsched_gym.agents.research" in out
    out = _run(base % ", 'plugins': ['mrsched_gym.agents.research']")
    assert out == "ok ['mrsched_gym.agents.research']"
