"""Issue 32, signals and threads (findings 16, 17, 19): SIGTERM is handled as Ctrl-C (one line,
exit 128 + signal, the lock released, staging removed); pool workers end with their parent,
even a SIGKILLed one, without tracebacks, and do not hold the lock; one env stepped from two
threads at once is refused with a clear error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import timeit

import pytest

from mrsched_gym.cli import main
from mrsched_gym.errors import EpisodeStateError
from mrsched_gym.evaluate import make_env
from mrsched_gym.results import RunFolder


def _start(out):
    return subprocess.Popen(
        [sys.executable, "-m", "mrsched_gym.cli", "compare", "--policies", "fifo", "--seeds",
         "60", "--workers", "2", "--quiet", "--no-plots", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=_default_sigint)


def _default_sigint():
    """A terminal's shell starts a command with Ctrl-C at its default; a test process may have
    SIGINT ignored (a library it loaded set it), and an ignored signal stays ignored across exec,
    in which case Python never installs its Ctrl-C handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_episodes(out, p, n=2, timeout=60.0):
    journal = out / ".hadoop.journal.jsonl"
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if journal.is_file() and len(journal.read_text().splitlines()) > n:
            return
        assert p.poll() is None, p.stderr.read()
        time.sleep(0.05)
    raise AssertionError("no episode finished")


def _group_gone(pgid, timeout=5.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("sig, to_group", [(signal.SIGTERM, False), (signal.SIGINT, True)])
def test_sigterm_and_ctrl_c_end_the_run_in_one_line(tmp_path, sig, to_group):
    """Findings 16/17: SIGTERM was not handled (workers ran on, staging and lock stayed);
    Ctrl-C printed KeyboardInterrupt tracebacks."""
    p = _start(tmp_path)
    try:
        _wait_for_episodes(tmp_path, p)
        (os.killpg if to_group else os.kill)(p.pid, sig)     # a terminal's Ctrl-C: the group
        rc = p.wait(timeout=30)
        err = p.stderr.read()
        assert rc == 128 + sig, err
        lines = [x for x in err.splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith(f"interrupted ({sig.name})"), err
        assert _group_gone(p.pid), "workers outlived their parent"
        assert sorted(x.name for x in tmp_path.iterdir()) == [".hadoop.journal.jsonl"]
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.stderr.close()


def test_workers_of_a_killed_parent_end_quietly_and_free_the_lock(tmp_path):
    """Finding 16: after SIGKILL of the parent, pool workers ran on, printed BrokenPipe
    tracebacks and held the lock for 11-18 s."""
    p = _start(tmp_path)
    try:
        _wait_for_episodes(tmp_path, p)
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        assert _group_gone(p.pid, timeout=5.0), "workers outlived their parent"
        assert time.monotonic() - t0 < 5.0
        err = p.stderr.read()
        assert "Traceback" not in err and "BrokenPipe" not in err, err
        with RunFolder(tmp_path, "hadoop", {"x": 1}):      # the lock is free at once
            pass
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.stderr.close()


def test_a_termination_while_plotting_removes_the_staging_folder(tmp_path, monkeypatch,
                                                                 capsys):
    """Finding 17: SIGTERM during writing or plotting left .NAME.staging.* forever."""
    import mrsched_gym.evaluate.leaderboard as lb

    def terminated(*a, **k):
        raise KeyboardInterrupt(signal.SIGTERM)          # what the SIGTERM handler raises
    monkeypatch.setattr(lb, "plot_bars", terminated)
    rc = main(["compare", "--policies", "fifo", "--seeds", "1", "--workers", "1", "--quiet",
               "--out", str(tmp_path)])
    assert rc == 128 + signal.SIGTERM
    assert capsys.readouterr().err.strip().startswith("interrupted (SIGTERM)")
    assert sorted(x.name for x in tmp_path.iterdir()) == [".hadoop.journal.jsonl"]


def test_sigterm_raises_keyboard_interrupt_in_the_main_thread():
    from mrsched_gym.processes.lifecycle import handle_termination, signal_number
    old = signal.getsignal(signal.SIGTERM)
    try:
        handle_termination()
        with pytest.raises(KeyboardInterrupt) as e:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
        assert signal_number(e.value) == signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, old)


def _stepper(env, errors, n=3000):
    skip = env.action_space.n - 1
    try:
        for _ in range(n):
            _, _, term, trunc, _ = env.step(skip)
            if term or trunc:
                env.reset(seed=0)
    except Exception as e:                      # noqa: BLE001 (what the test inspects)
        errors.append(e)


@pytest.mark.parametrize("run", range(3))
def test_one_env_stepped_from_two_threads_is_refused_clearly(run):
    """Finding 19: one env stepped from two threads gave an IndexError."""
    env = make_env("mrsched/Hadoop-v0").unwrapped
    env.reset(seed=0)
    errors: list[BaseException] = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)                 # interleave the two threads as much as possible
    try:
        threads = [threading.Thread(target=_stepper, args=(env, errors)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors, "the two threads never overlapped"
    for e in errors:
        assert isinstance(e, EpisodeStateError), repr(e)
        assert "not thread-safe" in str(e) and "own env" in str(e)


def test_using_an_env_from_threads_one_after_the_other_is_fine():
    env = make_env("mrsched/Hadoop-v0").unwrapped
    env.reset(seed=0)
    errors: list[BaseException] = []
    for _ in range(2):
        t = threading.Thread(target=_stepper, args=(env, errors, 200))
        t.start()
        t.join()
    assert errors == []


def test_the_thread_check_costs_nothing_noticeable():
    """The check is a dict setdefault and pop: ~0.1-0.2 us against ~100 us a decision."""
    env = make_env("mrsched/Hadoop-v0").unwrapped
    env.reset(seed=0)

    def claim_release():
        env._claim("step")
        env.__dict__.pop("_busy", None)
    per_call = min(timeit.repeat(claim_release, number=20000, repeat=3)) / 20000
    assert per_call < 2e-6


def _fd_is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_pool_workers_do_not_hold_the_lock_or_journal(tmp_path):
    """Finding 16: workers forked while the lock was held kept it after their parent ended.
    A worker closes its copies of the lock's and the journal's descriptors at start."""
    from mrsched_gym.evaluate import run_parallel
    with RunFolder(tmp_path, "run", {"x": 1}) as folder:
        folder.open_journal()
        fds = [folder._lock_fd, folder._journal_fd]
        assert all(_fd_is_open(fd) for fd in fds)
        assert run_parallel(_fd_is_open, fds, workers=2, progress=False) == [False, False]


def test_main_leaves_the_signal_handlers_as_it_found_them(capsys):
    """Calling the command line in a process (a test, a notebook) does not leave its SIGTERM
    handler behind for the rest of the process."""
    from mrsched_gym.cli import main
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    assert main(["list", "--json"]) == 0
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before


def test_a_forked_child_ends_on_sigterm_while_the_handler_is_installed():
    """A process forked while the handler is active (any multiprocessing pool, not only the
    harness's) ends on SIGTERM as usual: Pool.terminate() never waits on a worker that turned
    the signal into a KeyboardInterrupt it swallowed."""
    import multiprocessing as mp

    from mrsched_gym.processes.lifecycle import handle_termination, restore_termination
    previous = handle_termination()
    try:
        child = mp.get_context("fork").Process(target=time.sleep, args=(30,))
        child.start()
        time.sleep(0.2)
        child.terminate()
        child.join(10)
        assert child.exitcode == -signal.SIGTERM
    finally:
        restore_termination(previous)


def _stuck_worker():
    time.sleep(60)            # a worker that never gets past its start (a lock held at fork)


def test_a_pool_ends_even_if_a_worker_never_reached_its_initializer():
    """CI hang: a pool worker stuck before its initializer kept the parent's SIGTERM handler
    (Ray's driver swallows it) and ``Pool.terminate()`` waited for it forever. Forked under
    :func:`forking_with_default_termination`, the worker ends on SIGTERM whatever it runs, and
    the parent's own handler is back once the pool exists."""
    import multiprocessing as mp

    from mrsched_gym.processes.lifecycle import forking_with_default_termination
    swallow = lambda *args: None                                    # noqa: E731
    previous = signal.signal(signal.SIGTERM, swallow)
    try:
        with forking_with_default_termination():
            pool = mp.get_context("fork").Pool(1, initializer=_stuck_worker)
        assert signal.getsignal(signal.SIGTERM) is swallow
        pids = [p.pid for p in pool._pool]
        ended = threading.Thread(target=pool.terminate, daemon=True)
        ended.start()
        ended.join(timeout=15)
        assert not ended.is_alive(), "Pool.terminate() waited on a worker that caught SIGTERM"
    finally:
        signal.signal(signal.SIGTERM, previous)
        for pid in pids if "pids" in locals() else []:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _gen2_collections_in_episodes(seed: int) -> tuple[int, int]:
    """(objects frozen in this worker, full collections during two episodes here)."""
    import gc

    from mrsched_gym.evaluate import run_episode
    full = []

    def count(phase, info):
        if phase == "stop" and info["generation"] == 2:
            full.append(1)
    gc.callbacks.append(count)
    try:
        for s in (seed, seed + 1):
            run_episode("mrsched/Hadoop-v0", "edf", s)
    finally:
        gc.callbacks.remove(count)
    return gc.get_freeze_count(), len(full)


def test_a_worker_keeps_what_its_parent_imported_out_of_full_collections():
    """Worker processes freeze what they inherit (gc.freeze at start): no full collection walks
    the imports during their first episodes."""
    from mrsched_gym.evaluate import run_parallel
    got = run_parallel(_gen2_collections_in_episodes, [0, 10], workers=2, progress=False)
    assert all(frozen > 10_000 for frozen, _ in got), got
    assert all(full == 0 for _, full in got), got
