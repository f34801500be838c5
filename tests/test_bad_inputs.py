"""Every bad input gets a clear error: a table of cases, each with the exception type and a
fragment of the message that names the field, file or line.

Kinds of case: ``yaml`` (a scenario file), ``override`` (``gym.make`` keyword arguments),
``trace`` (a trace file the scenario points at), ``action``, ``seed``, ``env_arg`` (constructor
arguments), ``state`` (calls out of order) and ``cli`` (``mrsched-gym`` arguments; they fail
before any episode runs). A second table holds inputs that look odd but are accepted by a
documented rule (numpy scalars, integer arrays, a UTF-8 byte-order mark, gzip by content).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import zipfile
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.cli import main
from mrsched_gym.config import (
    MAX_NODES,
    MAX_PERIODIC_STEPS,
    MAX_TASKS,
    ConfigError,
    bundled_scenarios,
    episode_size,
    load_scenario,
)
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.errors import EpisodeStateError, InputError, InputTypeError, MRSchedError
from mrsched_gym.models.traces import TraceError

ENV = "mrsched/Hadoop-v0"


@dataclass(frozen=True)
class Case:
    """One bad input: ``kind`` (see module doc), ``data`` (what to feed), the exception type and
    a fragment of its message (``{p}`` stands for the file the case writes)."""

    id: str
    kind: str
    data: Any
    exc: type
    fragment: str


def _yaml(id: str, text: str, fragment: str, exc: type = ConfigError) -> Case:
    return Case(id, "yaml", text, exc, fragment)


def _override(id: str, kwargs: dict, fragment: str, exc: type = ConfigError) -> Case:
    return Case(id, "override", kwargs, exc, fragment)


JOBS = "workload:\n  kind: jobs\n  jobs:\n    - {type: sort, n_maps: 4%s}\n"
NODE = "cluster:\n  nodes:\n    - {count: 4%s}\n"

YAML_CASES = [
    # finite numbers only
    _yaml("inf-interference-step", "interference: {step_s: .inf}\n",
          "interference.step_s: must be a finite number, got inf"),
    _yaml("inf-block-mb", "cluster: {block_mb: .inf}\n",
          "cluster.block_mb: must be a finite number, got inf"),
    _yaml("inf-time-limit", "time_limit_s: .inf\n", "time_limit_s: must be a finite number"),
    _yaml("nan-time-limit", "time_limit_s: .nan\n",
          "time_limit_s: must be a finite number, got nan"),
    _yaml("nan-load", "workload: {load: .nan}\n", "workload.load: must be a finite number"),
    _yaml("inf-duration", "workload: {duration_s: .inf}\n",
          "workload.duration_s: must be a finite"),
    _yaml("inf-cpu-speed", NODE % ", cpu_speed: .inf",
          "cluster.nodes[0].cpu_speed: must be a finite"),
    _yaml("nan-mem", NODE % ", mem_gb: .nan", "cluster.nodes[0].mem_gb: must be a finite"),
    _yaml("nan-min-fraction", "availability: {min_fraction: .nan}\n",
          "availability.min_fraction: must be a finite"),
    _yaml("neg-inf-avail-step", "availability: {step_s: -.inf}\n",
          "availability.step_s: must be a finite number, got -inf"),
    _yaml("inf-deadline-factor", "workload: {deadline_factor: [1.5, .inf]}\n",
          "workload.deadline_factor[1]: must be a finite number"),
    _yaml("inf-type-mix", "workload: {type_mix: {sort: .inf}}\n",
          "workload.type_mix.sort: must be a finite number"),
    _yaml("nan-reward-weight", "reward: {weights: {deadline: .nan}}\n",
          "reward.weights.deadline: must be a finite number"),
    _yaml("inf-job-arrival", JOBS % ", arrival_s: .inf",
          "workload.jobs[0].arrival_s: must be a finite number"),
    _yaml("inf-job-deadline", JOBS % ", deadline_s: .inf",
          "workload.jobs[0].deadline_s: must be a finite number"),
    _yaml("nan-web-mean", "interference: {mean: .nan}\n", "interference.mean: must be a finite"),
    _yaml("nan-slow-start", "decisions: {slow_start: .nan}\n",
          "decisions.slow_start: must be a finite"),
    _yaml("inf-swap", "cluster: {swap_slowdown: .inf}\n",
          "cluster.swap_slowdown: must be a finite"),
    _yaml("nan-weight-range", "workload: {weight_range: [.nan, 1]}\n",
          "workload.weight_range[0]: must be a finite"),
    _yaml("inf-trace-offset", "interference: {trace_offset_s: .inf}\n",
          "interference.trace_offset_s: must be a finite"),
    _yaml("inf-kill-cleanup", "decisions: {preemption: {kill_cleanup_s: .inf}}\n",
          "decisions.preemption.kill_cleanup_s: must be a finite"),
    _yaml("nan-orch-epoch", "cluster: {orchestrator_epoch_s: .nan}\n",
          "cluster.orchestrator_epoch_s: must be a finite"),
    _yaml("inf-forecast-noise", "availability: {forecast_noise: .inf}\n",
          "availability.forecast_noise: must be a finite"),
    _yaml("inf-size-mean", "workload: {size_mean: .inf}\n", "workload.size_mean: must be a finite"),
    # values that would exhaust memory or time, and extreme values that break the arithmetic
    _yaml("nodes-5M", NODE.replace("count: 4", "count: 5000000") % "",
          "cluster.nodes[0].count: 5,000,000 nodes, more than the limit of 10,000"),
    _yaml("nodes-sum", "cluster:\n  nodes: [{count: 6000}, {count: 6000}]\n",
          "cluster.nodes: 12,000 nodes in all, more than the limit of 10,000"),
    _yaml("interference-step-1ms", "interference: {step_s: 0.001}\n",
          "interference.step_s: time_limit_s / step_s gives 86,400,001 steps, more than the "
          "limit of 1,000,000"),
    _yaml("availability-step-10ms", "availability: {step_s: 0.01}\n",
          "availability.step_s: time_limit_s / step_s gives 8,640,001 steps"),
    _yaml("step-subnormal", "interference: {step_s: 5.0e-324}\n",
          "interference.step_s: time_limit_s / step_s gives inf steps"),
    _yaml("step-huge", "availability: {step_s: 1.0e+9}\n", "availability.step_s: must be in"),
    _yaml("time-limit-1e9", "time_limit_s: 1.0e+9\n",
          "time_limit_s: must be in (0, 31,622,400] s (366 days), got 1000000000.0"),
    _yaml("time-limit-zero", "time_limit_s: 0\n", "time_limit_s: must be in (0,"),
    _yaml("time-limit-negative", "time_limit_s: -5\n", "time_limit_s: must be in (0,"),
    _yaml("synthetic-tasks", "workload: {duration_s: 3.0e+7, load: 5}\n",
          "workload: about"),
    _yaml("size-mean-huge", "workload: {size_mean: 1.0e+7, size_std: 1}\n",
          f"tasks in all expected, more than the limit of {MAX_TASKS:,} tasks"),
    _yaml("job-list-tasks", JOBS.replace("n_maps: 4", "n_maps: 2000000") % "",
          "workload.jobs: 1 jobs with 2,500,000 tasks in all, more than the limit of 1,000,000"),
    _yaml("orchestrator-epochs",
          "cluster: {orchestrator: uniform, orchestrator_epoch_s: 0.01}\n",
          "cluster.orchestrator_epoch_s: time_limit_s / orchestrator_epoch_s gives 8,640,000"),
    _yaml("onoff-cells",
          "cluster: {nodes: [{count: 5000}]}\navailability: {generator: onoff, step_s: 30}\n",
          "availability.step_s: 5,000 nodes x 2,881 steps = 14,405,000 timeline cells"),
    _yaml("shared-cells",
          "cluster: {nodes: [{count: 2000, kind: shared}]}\ninterference: {step_s: 10}\n",
          "interference.step_s: 2,000 nodes x 8,641 steps = 17,282,000 timeline cells"),
    _yaml("task-work-subnormal", "workload: {task_work_scale: 5.0e-324}\n",
          "workload: about inf jobs"),
    _yaml("period-subnormal", "interference: {period_s: 5.0e-324}\n",
          "interference.period_s: must be >= 1"),
    _yaml("size-std-huge", "workload: {size_std: 1.0e+9}\n",
          "workload.size_std: must be in [0, 100 x size_mean"),
    _yaml("cpu-speed-tiny", NODE % ", cpu_speed: 1.0e-9", "cluster.nodes[0].cpu_speed: must be in"),
    _yaml("swap-huge", "cluster: {swap_slowdown: 1.0e+9}\n", "cluster.swap_slowdown: must be in"),
    _yaml("swap-beyond-any-range", "cluster: {swap_slowdown: 1.0e+300}\n",
          "line 1: cluster.swap_slowdown: must be at most 1e+12 in magnitude, got 1e+300"),
    _yaml("block-subnormal", "cluster: {block_mb: 5.0e-324}\n",
          "cluster.block_mb: must be >= 1 (HDFS's smallest block)"),
    _yaml("max-candidates-1000", "decisions: {max_candidates: 1000}\n",
          "decisions.max_candidates: must be in [1, 256], got 1000"),
    _yaml("int-too-large-for-float", "workload: {load: " + "9" * 400 + "}\n",
          "line 1: an integer of 400 digits, more than a config file's limit (100)"),
    # typos in fields with a fixed set of values
    _yaml("accelerator-cel", NODE % ", accelerator: cel",
          "cluster.nodes[0].accelerator: unknown accelerator 'cel'; known: cell"),
    _yaml("accelerator-gpu", NODE % ", accelerator: gpu", "unknown accelerator 'gpu'"),
    _yaml("node-kind", NODE % ", kind: sharde",
          "cluster.nodes[0].kind: must be one of 'dedicated', 'shared'; got 'sharde'"),
    _yaml("resource-mode-case", "cluster: {resource_mode: Slots}\n",
          "cluster.resource_mode: must be one of 'slots', 'containers'; got 'Slots'"),
    _yaml("memory-overcommit", "cluster: {memory_overcommit: kill}\n",
          "cluster.memory_overcommit: must be one of 'swap', 'fail'"),
    _yaml("orchestrator", "cluster: {orchestrator: regresion}\n",
          "cluster.orchestrator: must be one of 'none', 'uniform', 'regression'"),
    _yaml("hypervisor-policy", "interference: {policy: Credit}\n",
          "interference.policy: must be one of 'credit', 'background'; got 'Credit'"),
    _yaml("web-load", "interference: {load: sinus}\n", "interference.load: must be one of"),
    _yaml("availability-generator", "availability: {generator: on-off}\n",
          "availability.generator: must be one of 'none', 'diurnal', 'bursty', 'onoff', 'trace'"),
    _yaml("availability-mode", "availability: {mode: node}\n",
          "availability.mode: must be one of 'nodes', 'capacity'; got 'node'"),
    _yaml("workload-kind", "workload: {kind: synth}\n", "workload.kind: must be one of"),
    _yaml("task-model", "workload: {task_model: Aloja}\n", "workload.task_model: must be one of"),
    _yaml("primitive", "decisions: {preemption: {primitives: [kill, pause]}}\n",
          "decisions.preemption.primitives: unknown value 'pause'; allowed: 'kill', 'suspend'"),
    _yaml("primitive-duplicate", "decisions: {preemption: {primitives: [kill, kill]}}\n",
          "decisions.preemption.primitives: duplicates"),
    _yaml("headline", "reward: {headline: deadline_penalty}\n", "reward.headline: must be one of"),
    _yaml("trace-types", "workload: {trace_types: {map_only: grepp, aggregate: sort, "
          "transform: sort}}\n", "workload.trace_types.map_only: unknown job type 'grepp'"),
    _yaml("job-type", JOBS.replace("type: sort", "type: wordcnt") % "",
          "workload.jobs[0].type: unknown job type 'wordcnt'"),
    _yaml("reward-component", "reward: {weights: {deadlines: 1}}\n",
          "reward.weights.deadlines: unknown component"),
    # duplicate keys
    _yaml("duplicate-top", "time_limit_s: 100\ntime_limit_s: 200\n",
          "line 2 invalid YAML: duplicate key 'time_limit_s' (first at line 1)"),
    _yaml("duplicate-flow", "workload: {load: 0.5, load: 0.9}\n",
          "line 1 invalid YAML: duplicate key 'load' (first at line 1)"),
    _yaml("duplicate-nested", "cluster:\n  racks: 2\n  nodes:\n    - count: 4\n      mem_gb: 8\n"
          "      count: 5\n", "line 6 invalid YAML: duplicate key 'count' (first at line 4)"),
    _yaml("duplicate-section",
          "workload: {load: 0.5}\ncluster: {racks: 1}\nworkload: {load: 0.9}\n",
          "line 3 invalid YAML: duplicate key 'workload' (first at line 1)"),
    # wrong types and shapes
    _yaml("quoted-bool", "decisions: {admission: 'yes'}\n",
          "decisions.admission: expected true/false, got 'yes'"),
    _yaml("quoted-number", "workload: {load: '0.5'}\n",
          "workload.load: expected a number, got '0.5'"),
    _yaml("float-for-int", "cluster: {racks: 2.5}\n",
          "cluster.racks: expected an integer, got 2.5"),
    _yaml("bool-for-int", "cluster: {racks: true}\n",
          "cluster.racks: expected an integer, got True"),
    _yaml("bool-for-float", "workload: {load: true}\n",
          "workload.load: expected a number, got True"),
    _yaml("null-for-float", "workload: {load: null}\n",
          "workload.load: expected a number, got None"),
    _yaml("mapping-for-list", "cluster: {nodes: {count: 3}}\n",
          "cluster.nodes: expected a list, got {'count': 3}"),
    _yaml("list-for-mapping", "workload: {type_mix: [sort]}\n",
          "workload.type_mix: expected a mapping, got ['sort']"),
    _yaml("null-section", "workload: null\n", "workload: expected a mapping, got None"),
    _yaml("top-level-list", "- hadoop\n", "top level must be a mapping of scenario fields"),
    _yaml("empty-file", "", "top level must be a mapping of scenario fields, got None"),
    _yaml("bad-indentation", "workload:\n  load: 0.5\n kind: jobs\n", "invalid YAML"),
    _yaml("unknown-top-key", "time_limit: 5\n", "time_limit: unknown key (known:"),
    _yaml("numeric-key", "1: 2\nname: x\n", "1: unknown key"),
    _yaml("deadline-factor-order", "workload: {deadline_factor: [8, 1.5]}\n",
          "workload.deadline_factor: needs 0 < lo <= hi"),
    _yaml("deadline-factor-length", "workload: {deadline_factor: [1.5]}\n",
          "workload.deadline_factor: expected 2 values, got 1"),
    _yaml("no-node-groups", "cluster: {nodes: []}\n",
          "cluster.nodes: needs at least one node group"),
    _yaml("racks-above-nodes", "cluster: {racks: 40}\n",
          "cluster.racks: must be in [1, n_nodes=10]"),
    _yaml("jobs-after-limit", "time_limit_s: 100\n" + JOBS % ", arrival_s: 500",
          "time_limit_s: every job of workload.jobs arrives at or after the time limit"),
    _yaml("trace-missing-name", "availability: {generator: trace}\n",
          "availability.trace: required when generator is 'trace'"),
]


OVERRIDE_CASES = [
    _override("inf-load", {"workload__load": math.inf}, "workload.load: must be a finite number"),
    _override("nan-load", {"workload__load": float("nan")}, "workload.load: must be a finite"),
    _override("inf-step", {"interference__step_s": math.inf},
              "interference.step_s: must be a finite"),
    _override("inf-block", {"cluster__block_mb": math.inf}, "cluster.block_mb: must be a finite"),
    _override("np-inf", {"workload__load": np.float64("inf")}, "workload.load: must be a finite"),
    _override("time-limit-negative", {"time_limit_s": -5}, "time_limit_s: must be in (0,"),
    _override("unknown-field", {"workload__lod": 0.5},
              "override 'workload__lod': unknown key 'lod' (known: bytes_scale, deadline_base,"),
    _override("unknown-section", {"nosuch": 1}, "override 'nosuch': unknown key 'nosuch'"),
    _override("path-through-value", {"workload__load__x": 1},
              "override 'workload__load__x': load is not a section"),
    _override("bool-as-number", {"workload__load": True},
              "workload.load: expected a number, got True"),
    _override("np-bool-as-number", {"workload__load": np.bool_(True)},
              "workload.load: expected a number"),
    _override("string-as-number", {"workload__load": "0.9"},
              "workload.load: expected a number, got '0.9'"),
    _override("none-as-number", {"workload__load": None}, "workload.load: expected a number"),
    _override("np-float-as-int", {"cluster__racks": np.float64(2.0)},
              "cluster.racks: expected an integer, got 2.0"),
    _override("float-as-int", {"cluster__racks": 2.0},
              "cluster.racks: expected an integer, got 2.0"),
    _override("int-as-bool", {"decisions__admission": 1},
              "decisions.admission: expected true/false, got 1"),
    _override("string-as-bool", {"decisions__admission": "no"},
              "decisions.admission: expected true/false, got 'no'"),
    _override("short-pair", {"workload__deadline_factor": (1.5,)},
              "workload.deadline_factor: expected 2 values"),
    _override("2d-array-pair", {"workload__deadline_factor": np.ones((2, 2))},
              "workload.deadline_factor: expected a list"),
    _override("type-mix-typo", {"workload__type_mix": {"wordcnt": 1}}, "workload.type_mix.wordcnt"),
    _override("huge-int", {"workload__load": 10 ** 400},
              "workload.load: 100000000000000000000000000000000000000000000000000000000... is too "
              "large for a number"),
    _override("nodes-5M", {"cluster__nodes": [{"count": 5_000_000}]},
              "cluster.nodes[0].count: 5,000,000 nodes"),
    _override("step-1ms", {"interference__step_s": 0.001},
              "interference.step_s: time_limit_s / step_s gives 21,600,001 steps"),
    _override("size-mean-5M", {"workload__size_mean": 5_000_000},
              f"more than the limit of {MAX_TASKS:,} tasks"),
    _override("accelerator", {"cluster__nodes": [{"count": 2, "accelerator": "cel"}]},
              "cluster.nodes[0].accelerator: unknown accelerator 'cel'"),
    _override("section-not-mapping", {"workload": 3}, "workload: expected a mapping, got 3"),
    _override("generator-case", {"availability__generator": "Trace"},
              "availability.generator: must be one of"),
    _override("np-int-out-of-range", {"decisions__max_candidates": np.int64(0)},
              "decisions.max_candidates: must be in [1, 256], got 0"),
    _override("dotted-unknown", {"cluster.rack": 2}, "override 'cluster.rack': unknown key 'rack'"),
]


# ---------------------------------------------------------------------- trace files
CSV = "time_s,value\n0,0.5\n300,0.4\n600,0.6\n"
AVAIL = {"availability__generator": "trace", "availability__mode": "capacity"}
INVERT = {**AVAIL, "availability__trace_invert": True}
WEB = {"interference__load": "trace", "interference__trace_offset_s": 0.0}
JOB_HEADER = "submit_s,map_input_bytes,shuffle_bytes,output_bytes\n"
JOBS_OK = JOB_HEADER + "0,100000000,0,10\n60,200000000,5000000,10\n"
JOBTRACE = {"workload__kind": "trace", "workload__duration_s": 3600.0}


def _gz_truncated() -> bytes:
    return gzip.compress((CSV * 200).encode())[:-40]


def _gz_corrupt() -> bytes:
    data = bytearray(gzip.compress((CSV * 200).encode()))
    data[30:60] = b"\xff" * 30
    return bytes(data)


def _zip() -> bytes:
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("t.csv", CSV)
    return buf.getvalue()


def _trace(id: str, name: str, content: bytes | str | None, field: str | None,
           overrides: dict, fragment: str, exc: type = TraceError) -> Case:
    """A trace file ``name`` with ``content`` (``None``: no file), put in scenario field
    ``field`` (``None``: the overrides name a bundled trace)."""
    return Case(id, "trace", (name, content, field, overrides), exc, fragment)


TRACE_CASES = [
    _trace("binary", "t.csv", b"\x00\x01\x02\x03garbage\n", "availability__trace", AVAIL,
           "availability.trace: {p}:1: binary data (a NUL byte)"),
    _trace("latin1", "t.csv", b"time_s,value\n0,0.5\n300,0.4\xe9\n", "availability__trace", AVAIL,
           "availability.trace: {p}:3: not UTF-8 text (byte 0xe9"),
    _trace("bz2", "t.csv.bz2", bz2.compress(CSV.encode()), "availability__trace", AVAIL,
           "{p}: bzip2-compressed data; a trace is UTF-8 CSV text, plain or gzipped"),
    _trace("bz2-named-csv", "t.csv", bz2.compress(CSV.encode()), "interference__trace", WEB,
           "interference.trace: {p}: bzip2-compressed data"),
    _trace("xz", "t.csv.xz", lzma.compress(CSV.encode()), "availability__trace", AVAIL,
           "{p}: xz-compressed data"),
    _trace("zip", "t.zip", _zip(), "availability__trace", AVAIL, "{p}: a zip archive"),
    _trace("utf16", "t.csv", CSV.encode("utf-16"), "availability__trace", AVAIL,
           "{p}: UTF-16 text"),
    _trace("gz-truncated", "t.csv.gz", _gz_truncated(), "availability__trace", AVAIL,
           "corrupt or truncated gzip data"),
    _trace("gz-corrupt", "t.csv.gz", _gz_corrupt(), "availability__trace", AVAIL,
           "{p}:1: corrupt or truncated gzip data"),
    _trace("gz-header-only", "t.csv.gz", b"\x1f\x8b\x08\x00", "availability__trace", AVAIL,
           "{p}:1: corrupt or truncated gzip data"),
    _trace("empty", "t.csv", b"", "availability__trace", AVAIL,
           "{p}:1: header must start with 'time_s,<value column>'"),
    _trace("header-only", "t.csv", "time_s,value\n", "availability__trace", AVAIL,
           "{p}: no data rows"),
    _trace("percent-inverted", "t.csv", "time_s,cpu_pct\n0,0.5\n300,55\n", "availability__trace",
           INVERT, "availability.trace: {p}:3: value 55 is outside [0, 1] (trace_invert reads "
           "usage fractions"),
    _trace("negative-inverted", "t.csv", "time_s,u\n0,-0.1\n", "availability__trace", INVERT,
           "{p}:2: value -0.1 is outside [0, 1]"),
    _trace("negative-capacity", "t.csv", "time_s,cap\n0,1\n300,-0.5\n", "availability__trace",
           AVAIL,
           "availability.trace: {p}:3: value -0.5 is outside [0, inf] (capacity cannot be "
           "negative)"),
    _trace("negative-web-load", "t.csv", "time_s,rps\n0,10\n300,-3\n", "interference__trace", WEB,
           "interference.trace: {p}:3: value -3 is outside [0, inf] (a load cannot be negative)"),
    _trace("nan-value", "t.csv", "time_s,v\n0,nan\n", "availability__trace", AVAIL,
           "{p}:2: non-finite value"),
    _trace("inf-time", "t.csv", "time_s,v\n0,1\ninf,1\n", "interference__trace", WEB,
           "{p}:3: non-finite value"),
    _trace("time-not-increasing", "t.csv", "time_s,v\n0,1\n300,1\n300,1\n", "availability__trace",
           AVAIL, "{p}:4: time 300.0 is not after 300.0"),
    _trace("one-column", "t.csv", "time_s,v\n0\n", "availability__trace", AVAIL,
           "{p}:2: expected 2 columns, got 1"),
    _trace("not-a-number", "t.csv", "time_s,v\n0,1\n300,high\n", "interference__trace", WEB,
           "{p}:3: not a number: '300,high'"),
    _trace("offset-past-end", "t.csv", CSV, "availability__trace",
           {**AVAIL, "availability__trace_offset_s": 99999.0},
           "availability.trace_offset_s: 99999 is past the last row of {p} (time 600)"),
    _trace("web-offset-past-end", "t.csv", CSV, "interference__trace",
           {**WEB, "interference__trace_offset_s": 5000.0},
           "interference.trace_offset_s: 5000 is past the last row"),
    _trace("missing-file", "absent.csv", None, "availability__trace", AVAIL,
           "availability.trace: {p}: trace file not found"),
    _trace("directory", "adir", "DIR", "availability__trace", AVAIL,
           "{p}: is a directory, not a trace file"),
    _trace("job-trace-as-series", "-", None, None,
           {**WEB, "interference__trace": "swim-fb2009-day0"},
           "swim_fb2009_day0.csv.gz:1: header must start with 'time_s,<value column>', got "
           "'submit_s,map_input_bytes"),
    # job traces
    _trace("series-as-job-trace", "-", None, None,
           {**JOBTRACE, "workload__trace": "nasa-http-1995"},
           "nasa_http_1995_5min.csv.gz:1: header must be submit_s,map_input_bytes"),
    _trace("job-binary", "j.csv", b"\x00\xff\x00\xff", "workload__trace", JOBTRACE,
           "workload.trace: {p}:1: binary data"),
    _trace("job-bz2", "j.csv", bz2.compress(JOBS_OK.encode()), "workload__trace", JOBTRACE,
           "workload.trace: {p}: bzip2-compressed data"),
    _trace("job-negative", "j.csv", JOB_HEADER + "0,1,2,3\n5,-1,2,3\n", "workload__trace",
           JOBTRACE, "workload.trace: {p}:3: negative value -1 of map_input_bytes"),
    _trace("job-decreasing", "j.csv", JOB_HEADER + "10,1,2,3\n5,1,2,3\n", "workload__trace",
           JOBTRACE, "{p}:3: submit time 5.0 is before 10.0"),
    _trace("job-header", "j.csv", "submit,in,shuffle,out\n0,1,2,3\n", "workload__trace", JOBTRACE,
           "{p}:1: header must be submit_s,map_input_bytes,shuffle_bytes,output_bytes"),
    _trace("job-swim-columns", "j.tsv", "job0\t1\t1\t100\n", "workload__trace", JOBTRACE,
           "{p}:1: expected 6 tab-separated SWIM columns"),
    _trace("job-gz-truncated", "j.csv.gz",
           gzip.compress((JOB_HEADER + "0,100000000,0,10\n" * 2000).encode())[:-30],
           "workload__trace", JOBTRACE, "corrupt or truncated gzip data"),
    _trace("job-window-empty", "j.csv", JOBS_OK, "workload__trace",
           {**JOBTRACE, "workload__trace_offset_s": 9000.0},
           "workload.trace_offset_s: no job of {p} is submitted in [9000.0, 12600.0)",
           ConfigError),
    _trace("job-window-too-large", "j.csv",
           JOB_HEADER + "".join(f"{i},{10 ** 15},{10 ** 14},0\n" for i in range(40)),
           "workload__trace", {**JOBTRACE, "workload__max_maps": 100_000},
           "workload.trace: the window [0, 3600) s of {p} holds 40 jobs with 5,000,000 tasks, "
           "more than the limit of 1,000,000 tasks", ConfigError),
]


# ---------------------------------------------------------------------- actions, seeds, args
def _case(id: str, kind: str, data: Any, exc: type, fragment: str) -> Case:
    return Case(id, kind, data, exc, fragment)


ACTION_CASES = [
    _case("float", "action", 2.7, InputTypeError,
          "action must be an integer in [0, 8], got float 2.7"),
    _case("integral-float", "action", 3.0, InputTypeError, "got float 3.0"),
    _case("np-float32", "action", np.float32(1.9), InputTypeError, "got float32 1.9"),
    _case("nan", "action", float("nan"), InputTypeError, "got float nan"),
    _case("string", "action", "3", InputTypeError, "got str '3'"),
    _case("none", "action", None, InputTypeError, "got NoneType None"),
    _case("bool-true", "action", True, InputTypeError, "got bool True (bools are refused"),
    _case("bool-false", "action", False, InputTypeError, "got bool False"),
    _case("np-bool", "action", np.bool_(True), InputTypeError, "got bool True"),
    _case("array-1", "action", np.array([1]), InputTypeError,
          "got an array of shape (1,) and dtype int64"),
    _case("array-float-0d", "action", np.array(1.0), InputTypeError,
          "got an array of shape () and dtype float64"),
    _case("array-2d", "action", np.zeros((2, 2), dtype=int), InputTypeError, "shape (2, 2)"),
    _case("list", "action", [1], InputTypeError, "got list [1]"),
    _case("complex", "action", 1 + 0j, InputTypeError, "got complex"),
    _case("bytes", "action", b"1", InputTypeError, "got bytes b'1'"),
    _case("strict-illegal", "strict_action", 5, InputError, "action 5 is not legal now"),
    _case("strict-out-of-range", "strict_action", 99, InputError, "action 99 is not legal now"),
    _case("strict-negative", "strict_action", -1, InputError, "action -1 is not legal now"),
]

SEED_CASES = [   # Gymnasium's own rule: None or a Python int >= 0
    _case("negative", "seed", -1, gym.error.Error, "Seed must be greater or equal to zero"),
    _case("string", "seed", "a", gym.error.Error, "Seed must be a python integer"),
    _case("float", "seed", 1.5, gym.error.Error, "Seed must be a python integer"),
    _case("np-int", "seed", np.int64(3), gym.error.Error, "Seed must be a python integer"),
    _case("list", "seed", [1, 2], gym.error.Error, "Seed must be a python integer"),
]

ENV_ARG_CASES = [
    _case("misspelt-argument", "env_arg", {"observe_objectiv": True}, ConfigError,
          "the env's own arguments: scenario, render_mode, strict_actions, observe_objective, "
          "lean_info, allow_idle (did you mean 'observe_objective'?)"),
    _case("misspelt-second-argument", "env_arg", {"time_limit_s": 100, "lean_inf": True},
          ConfigError, "override 'lean_inf': unknown key 'lean_inf' (known: availability, "),
    _case("misspelt-second-argument-hint", "env_arg", {"time_limit_s": 100, "lean_inf": True},
          ConfigError, "(did you mean 'lean_info'?)"),
    _case("env-id-as-scenario", "env_arg", {"scenario": "mrsched/HadoopOrchestrated-v0"},
          ConfigError, "'mrsched/HadoopOrchestrated-v0' is a registered env id (for gym.make "
          "and the command line): a scenario file is named by its bundled name, here 'hadoop' "
          "with the overrides {'cluster.orchestrator': 'regression'}"),
    _case("strict-string", "env_arg", {"strict_actions": "no"}, InputTypeError,
          "strict_actions must be True or False, got str 'no'"),
    _case("strict-int", "env_arg", {"strict_actions": 1}, InputTypeError,
          "strict_actions must be True or False, got int 1"),
    _case("strict-none", "env_arg", {"strict_actions": None}, InputTypeError,
          "strict_actions must be True or False, got NoneType None"),
    _case("render-human", "env_arg", {"render_mode": "human"}, InputError,
          "render_mode must be None or one of ['ansi', 'rgb_array'], got 'human'"),
    _case("render-int", "env_arg", {"render_mode": 3}, InputError, "render_mode must be"),
    _case("scenario-int", "env_arg", {"scenario": 3}, InputTypeError,
          "scenario must be a YAML path, a bundled scenario name or a Scenario, got int 3"),
    _case("scenario-list", "env_arg", {"scenario": ["hadoop"]}, InputTypeError, "got list"),
    _case("scenario-empty", "env_arg", {"scenario": ""}, ConfigError, "scenario name is empty"),
    _case("scenario-unknown", "env_arg", {"scenario": "hadop"}, ConfigError,
          "hadop: no such scenario file or bundled scenario (bundled: admission"),
    _case("scenario-missing-file", "env_arg", {"scenario": "/no/such.yaml"}, ConfigError,
          "/no/such.yaml: scenario file not found"),
]

STATE_CASES = [
    _case("step-before-reset", "state", "step", EpisodeStateError, "step() called before reset()"),
    _case("masks-before-reset", "state", "masks", EpisodeStateError,
          "action_masks() called before reset()"),
    _case("step-after-end", "state", "after_end", EpisodeStateError,
          "step() called after the episode ended"),
    _case("reset-options", "state", "options", InputError,
          "reset(options=...): this environment takes no options"),
    _case("reset-options-string", "state", "options_str", InputError,
          "takes no options, got str 'fast'"),
]

CLI_CASES = [   # each fails before any episode runs
    _case("seeds-zero", "cli", ["compare", "--seeds", "0"], SystemExit,
          "argument --seeds: must be from 1 to 100,000, got 0"),
    _case("seeds-negative", "cli", ["compare", "--seeds", "-3"], SystemExit,
          "argument --seeds: must be from 1 to 100,000, got -3"),
    _case("seeds-text", "cli", ["compare", "--seeds", "ten"], SystemExit,
          "argument --seeds: expected an integer, got 'ten'"),
    _case("workers-zero", "cli", ["compare", "--workers", "0"], SystemExit,
          "argument --workers: must be from 1 to 1,024, got 0"),
    _case("workers-negative", "cli", ["compare", "--workers", "-2"], SystemExit,
          "argument --workers: must be from 1 to 1,024, got -2"),
    _case("seed-start-negative", "cli", ["compare", "--seed-start", "-1"], SystemExit,
          "argument --seed-start: must be from 0 to 4,294,967,295, got -1"),
    _case("reproduce-seeds", "cli", ["reproduce", "rds-case-study", "--seeds", "0"], SystemExit,
          "argument --seeds: must be from 1 to 100,000"),
    _case("demo-seed", "cli", ["demo", "--seed", "-1"], SystemExit,
          "argument --seed: must be from 0 to 4,294,967,295, got -1"),
    _case("train-steps", "cli", ["train", "--steps", "0"], SystemExit,
          "argument --steps: must be from 1 to 10,000,000,000"),
    _case("compare-unknown-env", "cli", ["compare", "--env", "nosuch", "--quiet", "--no-plots"],
          MRSchedError, "error: nosuch: no such scenario file or bundled scenario"),
    _case("demo-missing-file", "cli", ["demo", "--env", "/no/such.yaml"], MRSchedError,
          "error: /no/such.yaml: scenario file not found"),
    _case("compare-misspelt-id", "cli", ["compare", "--env", "mrsched/Hadop-v0", "--quiet"],
          MRSchedError, "registered ids: mrsched/Hadoop-v0, "),
    _case("compare-misspelt-id-hint", "cli", ["compare", "--env", "mrsched/Hadop-v0"],
          MRSchedError, "did you mean 'mrsched/Hadoop-v0'?"),
    _case("demo-unknown-policy", "cli", ["demo", "--policies", "edf", "edff"], MRSchedError,
          "error: policy 'edff': unknown baseline 'edff'"),
    _case("compare-set-no-value", "cli", ["compare", "--set", "workload.load"], MRSchedError,
          "error: --set 'workload.load': expected KEY=VALUE (e.g. workload.load=0.9)"),
    _case("compare-set-unknown-key", "cli", ["compare", "--set", "workload.lod=0.5"],
          MRSchedError, "error: override 'workload.lod': unknown key 'lod' (known: "),
    _case("compare-set-bad-value", "cli", ["compare", "--set", "workload.load=high"],
          MRSchedError, "error: overrides: workload.load: expected a number, got 'high'"),
    _case("compare-set-twice", "cli", ["compare", "--set", "workload.load=0.5",
                                       "workload.load=0.6"], MRSchedError,
          "error: --set: 'workload.load' given more than once"),
    _case("compare-set-not-yaml", "cli", ["compare", "--set", "workload.load=[1"], MRSchedError,
          "error: --set 'workload.load=[1': the value is not YAML: "),
    _case("demo-duplicate-policy", "cli", ["demo", "--policies", "edf", "edf"], MRSchedError,
          "error: policies: edf given more than once"),
    _case("demo-bad-parameter", "cli", ["demo", "--policies", "fair:delay"], MRSchedError,
          "error: policy 'fair:delay': parameter 'delay' is not key=value"),
    _case("show-unknown", "cli", ["show-scenario", "hadop"], MRSchedError,
          "error: hadop: no such scenario"),
    _case("show-duplicate-key", "cli", ["show-scenario", "{p}"], MRSchedError,
          "error: {p}: line 2 invalid YAML: duplicate key 'time_limit_s'"),
    _case("reproduce-unknown", "cli", ["reproduce", "nosuch"], MRSchedError, "error: "),
]

BAD = YAML_CASES + OVERRIDE_CASES + TRACE_CASES + ACTION_CASES + SEED_CASES + ENV_ARG_CASES + \
    STATE_CASES + CLI_CASES


def test_the_table_is_large_and_ids_are_unique():
    assert len(BAD) >= 150
    ids = [f"{c.kind}-{c.id}" for c in BAD]
    assert len(set(ids)) == len(ids)


# ---------------------------------------------------------------------- running a case
def _write(path, content) -> None:
    if content == "DIR":
        path.mkdir()
    elif content is not None:
        if isinstance(content, str):
            path.write_text(content)
        else:
            path.write_bytes(content)


def _reset_env(**kw) -> MRSchedEnv:
    env = MRSchedEnv(**kw)
    env.reset(seed=3)
    return env


def _run(case: Case, tmp_path, capsys) -> str:
    """Feed the case's input; return the message of what it raised (or printed, for the CLI)."""
    p = tmp_path / "bad.yaml"
    if case.kind == "yaml":
        p.write_text(case.data)
        load_scenario(p)
    elif case.kind == "override":
        gym.make(ENV, **case.data)
    elif case.kind == "trace":
        name, content, field, overrides = case.data
        p = tmp_path / name
        _write(p, content)
        MRSchedEnv(**overrides, **({field: str(p)} if field else {}))
    elif case.kind == "action":
        _reset_env().step(case.data)
    elif case.kind == "strict_action":
        _reset_env(strict_actions=True).step(case.data)
    elif case.kind == "seed":
        gym.make(ENV).reset(seed=case.data)
    elif case.kind == "env_arg":
        MRSchedEnv(**case.data)
    elif case.kind == "state":
        _state(case.data)
    elif case.kind == "cli":
        p.write_text("time_limit_s: 100\ntime_limit_s: 200\n")
        code = _cli([a.replace("{p}", str(p)) for a in case.data])
        err = capsys.readouterr().err
        assert code == 2
        lines = [ln for ln in err.splitlines() if "error:" in ln]
        assert len(lines) == 1, err
        if case.exc is MRSchedError:
            assert err.strip() == lines[0], "the project's errors print one line, no traceback"
        raise _Reported(lines[0].replace(str(p), "{p}"))
    return ""


class _Reported(Exception):
    """What the CLI printed, raised so that every case ends in an exception."""


def _cli(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


def _state(what: str) -> None:
    if what == "step":
        MRSchedEnv().step(0)
    elif what == "masks":
        MRSchedEnv().action_masks()
    elif what == "after_end":
        env = MRSchedEnv(time_limit_s=1.0)
        env.reset(seed=0)
        env.step(env.K)
        env.step(env.K)
    elif what == "options":
        MRSchedEnv().reset(seed=0, options={"fast": True})
    elif what == "options_str":
        MRSchedEnv().reset(seed=0, options="fast")


def test_a_bad_value_is_not_taken_for_a_misspelt_env_argument():
    """The env's arguments are listed only when an override's top-level key is unknown."""
    with pytest.raises(ConfigError) as e:
        MRSchedEnv(time_limit_s=-5)
    assert "time_limit_s: must be in (0, " in str(e.value)
    assert "the env's own arguments" not in str(e.value)


def test_show_scenario_takes_a_registered_id(capsys):
    assert main(["show-scenario", "mrsched/HadoopOrchestrated-v0"]) == 0
    assert "orchestrator: regression" in capsys.readouterr().out


@pytest.mark.parametrize("case", BAD, ids=[f"{c.kind}-{c.id}" for c in BAD])
def test_bad_input_gets_a_clear_error(case, tmp_path, capsys):
    expected = _Reported if case.kind == "cli" else case.exc
    with pytest.raises(expected) as e:
        _run(case, tmp_path, capsys)
    msg = str(e.value)
    p = tmp_path / (case.data[0] if case.kind == "trace" else "bad.yaml")
    if case.kind == "yaml":
        assert msg.startswith(f"{p}: "), msg
    fragment = case.fragment.replace("{p}", str(p)) if case.kind != "cli" else case.fragment
    assert fragment in msg, f"{fragment!r} not in {msg!r}"
    if case.kind in ("yaml", "override", "trace", "action", "strict_action", "env_arg", "state"):
        assert isinstance(e.value, MRSchedError), "the project's errors derive from MRSchedError"


# ---------------------------------------------------------------------- accepted by rule
BOM_CSV = b"\xef\xbb\xbf" + CSV.encode()

ACCEPTED = [
    ("np-float64-override", "override", {"workload__load": np.float64(0.9)},
     lambda env: env.scenario.workload.load == 0.9 and type(env.scenario.workload.load) is float),
    ("np-float32-override", "override", {"workload__load": np.float32(0.5)},
     lambda env: env.scenario.workload.load == 0.5),
    ("np-int64-override", "override", {"cluster__racks": np.int64(3)},
     lambda env: env.scenario.cluster.racks == 3 and type(env.scenario.cluster.racks) is int),
    ("np-int32-override", "override", {"decisions__max_candidates": np.int32(4)},
     lambda env: env.K == 4),
    ("int-for-float", "override", {"workload__load": 1},
     lambda env: env.scenario.workload.load == 1.0),
    ("np-bool-override", "override", {"decisions__admission": np.bool_(True)},
     lambda env: env.scenario.decisions.admission is True),
    ("np-array-pair", "override", {"workload__deadline_factor": np.array([1.5, 4.0])},
     lambda env: env.scenario.workload.deadline_factor == (1.5, 4.0)),
    ("np-str-choice", "override", {"cluster__resource_mode": np.str_("containers")},
     lambda env: env.scenario.cluster.resource_mode == "containers"),
    ("np-bool-strict", "override", {"strict_actions": np.bool_(True)},
     lambda env: env.strict_actions is True),
    ("bom-csv-trace", "trace", ("t.csv", BOM_CSV), lambda env: env.sim.avail_f.min() >= 0.5),
    ("gzip-named-csv", "trace", ("t.csv", gzip.compress(CSV.encode())), lambda env: True),
    ("plain-named-gz", "trace", ("t.csv.gz", CSV), lambda env: True),
    ("crlf-trace", "trace", ("t.csv", CSV.replace("\n", "\r\n")), lambda env: True),
    ("bom-job-trace", "job_trace", ("j.csv", b"\xef\xbb\xbf" + JOBS_OK.encode()),
     lambda env: len(env.sim.jobs) == 2),
    ("bom-yaml", "yaml", b"\xef\xbb\xbftime_limit_s: 100\n",
     lambda sc: sc.time_limit_s == 100.0),
    ("yaml-merge-key", "yaml",
     b"cluster:\n  nodes:\n    - &b {count: 2}\n    - {<<: *b, count: 3}\n",
     lambda sc: sc.cluster.n_nodes == 5),
]


@pytest.mark.parametrize("name,kind,data,check", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_odd_but_valid_input_is_accepted(name, kind, data, check, tmp_path):
    if kind == "override":
        env = gym.make(ENV, **data).unwrapped
        env.reset(seed=0)
        assert check(env)
    elif kind in ("trace", "job_trace"):
        fname, content = data
        p = tmp_path / fname
        _write(p, content)
        if kind == "trace":
            env = MRSchedEnv(**{**AVAIL, "availability__trace": str(p)})
        else:
            env = MRSchedEnv(**{**JOBTRACE, "workload__trace": str(p)})
        env.reset(seed=0)
        assert check(env)
    else:
        p = tmp_path / "ok.yaml"
        p.write_bytes(data)
        assert check(load_scenario(p))


@pytest.mark.parametrize("action", [np.int64(8), np.int32(0), np.uint8(8), np.array(8), 8,
                                    np.array(0, dtype=np.int16)],
                         ids=["np-int64", "np-int32", "np-uint8", "0d-array", "int", "0d-int16"])
def test_integer_actions_are_accepted(action):
    env = _reset_env()
    obs, r, term, trunc, info = env.step(action)
    assert isinstance(r, float) and not info["invalid_action"]


def test_out_of_range_integers_stay_a_flagged_skip():
    env, twin = _reset_env(), _reset_env()
    for bad in (99, -1, 2 ** 70):
        o1, r1, *_, i1 = env.step(bad)
        o2, r2, *_, i2 = twin.step(twin.K)
        assert i1["invalid_action"] and not i2["invalid_action"] and r1 == r2


# ---------------------------------------------------------------------- limits and bundled files
def test_every_bundled_scenario_and_reproduction_loads_under_the_limits():
    """The limits are generous: every shipped scenario builds an env (traces read and checked),
    every reproduction (full and quick) loads, and the largest, thesis_scale, is far below."""
    from mrsched_gym.reproduce import bundled_reproductions, load_reproduction
    for name in bundled_scenarios():
        MRSchedEnv(name)
    for name in bundled_reproductions():
        for quick in (False, True):
            assert load_reproduction(name, quick=quick).cases
    size = episode_size(load_scenario("thesis_scale"))
    assert size["tasks"] * 5 < MAX_TASKS and size["nodes"] * 10 <= MAX_NODES
    assert size["interference_steps"] * 100 < MAX_PERIODIC_STEPS


# ------------------------------------------------------------- no finished episode at reset
@pytest.mark.parametrize("kw,seed", [({"time_limit_s": 60}, 1), ({"time_limit_s": 1}, 0),
                                     ({"time_limit_s": 1}, 7)])
def test_a_world_without_decisions_closes_on_the_next_step(kw, seed):
    env = gym.make(ENV, **kw)
    obs, info = env.reset(seed=seed)
    base = env.unwrapped
    assert info["episode_over"] and info["n_candidates"] == 0
    assert env.observation_space.contains(obs)
    mask = base.action_masks()
    assert mask[-1] and not mask[:-1].any(), "only skip is legal"
    obs, r, term, trunc, info = env.step(base.K)
    assert (term or trunc) and r == 0.0 and not info["invalid_action"]
    assert "deadline_penalty_h" in info["metrics"] and info["episode_log"] is not None
    with pytest.raises(EpisodeStateError):
        base.step(base.K)
    obs, info = env.reset(seed=2)            # the env is usable again after a reset
    assert info["time_s"] >= 0


def test_a_normal_reset_is_not_over():
    env = gym.make(ENV)
    _, info = env.reset(seed=1)
    assert info["episode_over"] is False and info["n_candidates"] > 0


def test_closing_step_with_an_illegal_action():
    env = MRSchedEnv(time_limit_s=1.0)
    env.reset(seed=0)
    *_, term, trunc, info = env.step(0)
    assert (term or trunc) and info["invalid_action"]
    strict = MRSchedEnv(time_limit_s=1.0, strict_actions=True)
    strict.reset(seed=0)
    with pytest.raises(InputError, match="action 0 is not legal now"):
        strict.step(0)


class _MaskPolicy:
    """An agent-shaped policy: picks the first legal action from the mask."""

    def reset(self, sim, seed=None):
        pass

    def act(self, obs, mask):
        return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("policy", ["edf", "fifo", "mask"])
def test_the_harness_runs_a_world_without_decisions(policy):
    from mrsched_gym.baselines import make_baseline
    from mrsched_gym.evaluate import run_episode
    pol = _MaskPolicy() if policy == "mask" else make_baseline(policy)
    res = run_episode(ENV, pol, 1, {"time_limit_s": 60})
    assert res["steps"] == 1 and res["return"] == 0.0
    assert res["metrics"]["invalid_actions"] == 0


def test_did_you_mean_names_the_closest_known_name_or_nothing():
    from mrsched_gym.errors import did_you_mean
    assert did_you_mean("deadline_penalty", ["deadline_misses", "deadline_penalty_h"]) == \
        "; did you mean 'deadline_penalty_h'?"
    assert did_you_mean("zzz", ["deadline_misses", "deadline_penalty_h"]) == ""
