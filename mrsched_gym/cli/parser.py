"""The ``mrsched-gym`` parser, one subparser per subcommand, and the entry point :func:`main`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mrsched_gym.cli.benchmark import benchmark_command
from mrsched_gym.cli.bounds import (
    MAX_SEED,
    MAX_SEEDS,
    MAX_TRAIN_STEPS,
    MAX_WORKERS,
    count,
    writable_path,
)
from mrsched_gym.cli.browse import demo_command, list_command, show_command
from mrsched_gym.cli.compare import compare_command
from mrsched_gym.cli.reproduce import reproduce_command
from mrsched_gym.cli.train import train_command
from mrsched_gym.errors import InputError
from mrsched_gym.policy.decision_budget import DEFAULT_BUDGET_S, check_budget

DESCRIPTION = (
    "Command line: mrsched-gym compare | benchmark | train | reproduce | demo | show-scenario |\n"
    "list (python -m mrsched_gym works the same).")


def seconds(text: str) -> float:
    """An argparse ``type=``: a finite budget in seconds (``check_budget``'s rule)."""
    try:
        value = float(text)
        if value == float("inf"):
            raise ValueError(text)
        return check_budget(value)  # type: ignore[return-value]
    except (ValueError, InputError):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}") \
            from None


BUDGET_HELP = (f"seconds one decision (or reset) of your own policy (FILE.py:Class, "
               f"package.module:Class) may take before its episode fails, named (default "
               f"{DEFAULT_BUDGET_S:g})")


def build_parser() -> argparse.ArgumentParser:
    """The ``mrsched-gym`` argument parser, one subparser per subcommand."""
    def at_least(lo: int, hi: int = MAX_SEEDS):
        """An argparse ``type=``: an integer in ``[lo, hi]``."""
        return count(lo, hi)

    p = argparse.ArgumentParser(prog="mrsched-gym", description=DESCRIPTION)
    from mrsched_gym import __version__
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="the leaderboard: policies x seeds on a scenario, ranked "
                       "by its headline metric, with result files and plots")
    c.add_argument("--env", nargs="+", default=["mrsched/Hadoop-v0"],
                   help="env ids, bundled scenario names or scenario YAML paths")
    c.add_argument("--policies", nargs="*", help="baseline names (name:key=value,...), "
                   "agent:PATH.zip (an SB3 zip is a pickle: loading it runs code, so load "
                   "trusted files only), rllib:FOLDER, or your own policy as FILE.py:Class or "
                   "package.module:Class (:key=value,... for its parameters); default: every "
                   "baseline that applies to the scenario")
    c.add_argument("--seeds", type=at_least(1), default=10,
                   help=f"number of seeds (default 10, at most {MAX_SEEDS:,})")
    c.add_argument("--seed-start", type=at_least(0, MAX_SEED), default=0,
                   help="first seed (default 0; seeds go up to 2**32 - 1)")
    c.add_argument("--workers", type=at_least(1, MAX_WORKERS), default=None,
                   help=f"processes (default: all cores; at most {MAX_WORKERS:,})")
    c.add_argument("--decision-budget", type=seconds, default=DEFAULT_BUDGET_S,
                   help=BUDGET_HELP)
    c.add_argument("--metric", help="ranking metric (default: the scenario's headline)")
    c.add_argument("--out", type=writable_path, default="results",
                   help="output folder (default ./results)")
    c.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.add_argument("--resume", action="store_true",
                   help="skip the episodes an interrupted or failed run into the same --out "
                   "already finished (its journal); re-run the rest")
    c.add_argument("--no-agents", action="store_true",
                   help="leave out the shipped agents trained for the env (default: included)")
    c.add_argument("--set", nargs="+", action="extend", metavar="KEY=VALUE",
                   help="scenario overrides for every env, e.g. --set workload.load=0.9 "
                   "cluster.racks=2 (values read as YAML; a relative trace path is read from "
                   "the working directory and recorded absolute): vary one factor and compare; "
                   "the results go to a folder of their own, results/NAME-<hash of the world>")
    c.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="run the episodes in local processes or as Ray tasks (the ray extra; "
                   "joins a running cluster with RAY_ADDRESS)")
    c.set_defaults(fn=compare_command)
    b = sub.add_parser("benchmark", help="the benchmark protocol: every id on fixed test seeds, "
                       "normalised scores (0 = random, 1 = best baseline), IQM and probability "
                       "of improvement with bootstrap CIs")
    b.add_argument("--ids", nargs="+", help="env ids (default: the suite, every id but "
                   "ThesisScale-v0 and Stragglers-v0)")
    b.add_argument("--agents", nargs="*", help="agents to score (agent:NAME, agent:PATH.zip, "
                   "rllib:FOLDER, or your own policy as FILE.py:Class or package.module:Class; "
                   "default: the shipped agents; an SB3 zip is a pickle: load trusted files "
                   "only; {id} in an entry stands for each world's id name, one checkpoint per "
                   "id ranked as one row: agent:results/plain-ppo/{id}.zip)")
    b.add_argument("--references", nargs="*", default=[],
                   help="reference rules to score and rank beside the agents (srpt, atc, "
                   "srpt-slowstart, edf-affinity:slow_start=1, ...), never the best baseline "
                   "that anchors the score's 1 (default: none)")
    b.add_argument("--seeds", type=at_least(1), default=10,
                   help=f"number of test seeds from 100 (default 10, at most {MAX_SEEDS:,})")
    b.add_argument("--workers", type=at_least(1, MAX_WORKERS), default=None,
                   help=f"processes (default: all cores; at most {MAX_WORKERS:,})")
    b.add_argument("--decision-budget", type=seconds, default=DEFAULT_BUDGET_S,
                   help=BUDGET_HELP)
    b.add_argument("--out", type=writable_path, default="results",
                   help="output parent folder (default ./results)")
    b.add_argument("--resume", action="store_true", help="skip the episodes a previous run "
                   "into the same --out finished")
    b.add_argument("--no-plots", action="store_true", help="skip the PNG plot")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(fn=benchmark_command)
    t = sub.add_parser("train", help="train an agent (MaskablePPO / PPO) from a YAML config")
    t.add_argument("config", nargs="?", default="hadoop_set",
                   help="config YAML path or bundled name (default hadoop_set; --list)")
    t.add_argument("--out", type=writable_path, default="runs",
                   help="output parent folder (default ./runs)")
    t.add_argument("--resume", help="checkpoint to continue from (OUT/NAME/last_model.zip)")
    t.add_argument("--overwrite", action="store_true", help="replace the run that OUT/NAME "
                   "holds (without it, or --resume, such a folder is refused)")
    t.add_argument("--allow-changes", action="store_true", help="with --resume: continue even "
                   "if the config changes settings of the run (seed, ppo, ...; the saved "
                   "config.yaml is replaced by this one); without it they are refused")
    t.add_argument("--steps", type=at_least(1, MAX_TRAIN_STEPS),
                   help=f"override total_timesteps (at most {MAX_TRAIN_STEPS:.0e})")
    t.add_argument("--seed", type=at_least(0, MAX_SEED), help="override seed (at most 2**32 - 1)")
    t.add_argument("--n-envs", type=at_least(1), help="override n_envs")
    t.add_argument("--name", help="override the run name")
    t.add_argument("--list", action="store_true", help="list the bundled configs")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(fn=train_command)
    d = sub.add_parser("demo", help="run one episode of each policy (default: random and the "
                       "baselines that apply) and print key metrics")
    d.add_argument("--env", default="mrsched/Hadoop-v0",
                   help="env id, bundled scenario name or YAML path (default mrsched/Hadoop-v0)")
    d.add_argument("--seed", type=at_least(0, MAX_SEED), default=0,
                   help="the episode's seed: the same seed plays the same world for every "
                   "policy (default 0)")
    d.add_argument("--policies", nargs="*", help="policies as in compare (default: random and "
                   "the baselines that apply to the scenario)")
    d.set_defaults(fn=demo_command)
    r = sub.add_parser("reproduce", help="run a source paper's experiment and print the paper's "
                       "numbers next to ours (--list names them)")
    r.add_argument("names", nargs="*", help="reproduction names (or 'all'); none = --list")
    r.add_argument("--list", action="store_true", help="list the reproductions")
    r.add_argument("--quick", action="store_true", help="the reduced CI size (fewer seeds/jobs)")
    r.add_argument("--seeds", type=at_least(1),
                   help=f"override the number of seeds (at most {MAX_SEEDS:,})")
    r.add_argument("--workers", type=at_least(1, MAX_WORKERS), default=None,
                   help=f"processes (default: all cores; at most {MAX_WORKERS:,})")
    r.add_argument("--out", type=writable_path, default="results/reproductions",
                   help="output folder")
    r.add_argument("--no-plots", action="store_true", help="skip the figure")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--json", type=writable_path,
                   help="also write every comparison (paper vs ours) and claim outcome of the "
                   "run into this JSON file")
    r.add_argument("--doc", type=writable_path,
                   help="also write the validation page (Markdown) generated from the run, "
                   "e.g. docs/validation.md")
    r.add_argument("--reuse", action="store_true",
                   help="take a reproduction's records from an earlier run into the same --out "
                   "when its file, size and package version are unchanged (the simulator's code "
                   "is trusted not to have changed since)")
    r.add_argument("--strict", action="store_true",
                   help="exit 1 when a claim's outcome differs from the file's expectation")
    r.set_defaults(fn=reproduce_command)
    s = sub.add_parser("show-scenario", help="print a scenario with every default filled in")
    s.add_argument("scenario", help="registered id, bundled name or YAML path")
    s.set_defaults(fn=show_command)
    ls = sub.add_parser("list", help="list registered ids (scenario, headline, baselines, "
                        "shipped agents), bundled scenarios and baselines")
    ls.add_argument("--json", action="store_true", help="print JSON (for scripts) instead of "
                    "the table")
    ls.set_defaults(fn=list_command)
    return p


#: What an interrupted command kept, by command (the interrupt message says it).
KEPT_ON_INTERRUPT = {
    "compare": "finished episodes are in the run's journal (--resume continues)",
    "benchmark": "finished episodes are in the run's journal (--resume continues)",
    "reproduce": "the reproductions finished before are in --out (--reuse takes them); the "
                 "running one's episodes are lost",
    "train": "the run's folder keeps the checkpoints written so far (from last_model.zip, "
             "--resume continues)",
    "demo": "nothing was written",
    "show-scenario": "nothing was written",
    "list": "nothing was written",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mrsched-gym`` command (and of ``python -m mrsched_gym``): the
    command's exit code (:func:`run_command`).

    Run as the command (``argv`` ``None``), it does not wait for threads or processes that
    code it ran (a policy's) left running: Python would wait for them at exit, forever for one
    that never ends. It says so in one line, ends those processes (SIGTERM) and ends with the
    command's exit code. Its output streams are guarded (:mod:`~mrsched_gym.cli.streams`): a
    closed, ASCII-only or full stream never costs the files the command writes, and a lost
    output is one ``error:`` line (exit 1 where the command had succeeded).
    """
    if argv is not None:
        return run_command(argv)
    from mrsched_gym.cli.streams import guard_streams, report
    guard_streams()
    code = run_command(argv)
    lost = report()
    if lost is not None:
        print(f"error: {lost}", file=sys.stderr)
        code = code or 1
    import multiprocessing
    import os
    import threading
    threads = [t.name for t in threading.enumerate()
               if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    children = [p for p in multiprocessing.active_children() if not p.daemon]
    if threads or children:
        for child in children:
            child.terminate()
        print(f"note: code the command ran (a policy's?) left {len(threads)} thread(s) and "
              f"{len(children)} process(es) running; the command ends without waiting for "
              f"them" + (" (the processes are terminated)" if children else ""),
              file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def run_command(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv``) and run the command; its exit code.

    Bad arguments are refused by argparse (usage and an ``error:`` line, exit 2). The project's
    own errors (:class:`~mrsched_gym.errors.MRSchedError`: a bad scenario, trace, policy name...)
    print as one ``error: <message>`` line on stderr and exit 2; anything else is a bug and keeps
    its traceback. A reader that closes the pipe early (``... | head``) ends the command quietly
    (exit 1).
    """
    from mrsched_gym.errors import MRSchedError

    parser = build_parser()
    if not (sys.argv[1:] if argv is None else list(argv)):     # no subcommand: the whole help
        parser.print_help()
        return 2
    args = parser.parse_args(argv)
    from mrsched_gym.processes.lifecycle import (
        handle_termination,
        restore_termination,
        signal_number,
    )
    previous = handle_termination()
    try:
        code = args.fn(args)
        sys.stdout.flush()
        return code
    except MRSchedError as e:
        print("error: " + " ".join(str(e).split("\n")), file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader closed the pipe early (mrsched-gym show-scenario hadoop | head): end quietly.
        # Python flushes stdout again at exit; point it at devnull so that flush cannot fail
        # (the recipe of the Python docs, "Note on SIGPIPE").
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (SystemExit, GeneratorExit) as e:
        # no command exits this way itself: code it ran (a policy, a callback) did
        print(f"error: the command was ended by {type(e).__name__}"
              f"{f'({e.code!r})' if isinstance(e, SystemExit) else ''} raised by code it "
              "ran (a policy's?); its results are incomplete", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        import signal
        sig = signal_number(e)
        kept = KEPT_ON_INTERRUPT.get(args.cmd, "stopped")
        print(f"\ninterrupted ({signal.Signals(sig).name}): {kept}", file=sys.stderr)
        return 128 + sig
    finally:
        restore_termination(previous)

