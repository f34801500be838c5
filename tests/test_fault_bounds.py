"""Issue 46, item 3: parsing is bounded. YAML bombs of several shapes (alias fan-out, deep
nesting of every bracket kind, recursive anchors, many aliases, sheer size) in scenario,
reproduction and training-config files, and trace bombs (long lines, many lines, gzip bombs,
special files) are each refused quickly with one line naming the file; no ``RecursionError`` or
``MemoryError`` reaches a user. Also item 7's quoted CSV numbers."""

from __future__ import annotations

import gzip
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrsched_gym.cli import main
from mrsched_gym.config import ConfigError, load_scenario, parse_yaml
from mrsched_gym.config.bounded_yaml import MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_NODES
from mrsched_gym.config.files import MAX_CONFIG_BYTES
from mrsched_gym.models import traces
from mrsched_gym.models.traces import TraceError, read_job_trace, read_series

JOB_HEAD = "submit_s,map_input_bytes,shuffle_bytes,output_bytes\n"
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def laughs(fan_out: int, levels: int, flow: bool) -> str:
    """A "billion laughs" document: each level a list of ``fan_out`` aliases of the one before
    (``fan_out ** levels`` values once expanded)."""
    lines = ["l0: &l0 [lol, lol]"]
    for i in range(1, levels + 1):
        if flow:
            lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fan_out) + "]")
        else:
            lines.append(f"l{i}: &l{i}")
            lines.extend(f"  - *l{i - 1}" for _ in range(fan_out))
    return "\n".join(lines) + "\n"


def nested(depth: int, kind: str) -> str:
    """A document nested ``depth`` levels deep with brackets, braces or block indentation."""
    if kind == "seq":
        return "[" * depth + "1" + "]" * depth
    if kind == "map":
        return "{a: " * depth + "1" + "}" * depth
    if kind == "block":
        return "".join("  " * i + "a:\n" for i in range(depth)) + "  " * depth + "b: 1\n"
    return "a: " + "[{b: " * (depth // 2) + "1" + "}]" * (depth // 2)     # mixed


def refused(text: str, source: str = "bomb.yaml") -> str:
    """Parse ``text``: it must be refused with one ConfigError line naming ``source`` quickly."""
    start = time.perf_counter()
    with pytest.raises(ConfigError) as e:
        parse_yaml(text, source)
    assert time.perf_counter() - start < 10.0
    msg = str(e.value)
    assert msg.startswith(f"{source}:") and "\n" not in msg
    return msg


@SETTINGS
@given(fan_out=st.integers(2, 30), levels=st.integers(1, 12), flow=st.booleans())
def test_alias_bombs_are_refused_before_expansion(fan_out, levels, flow):
    text = laughs(fan_out, levels, flow)
    expanded = 2 * fan_out ** levels + sum(fan_out ** i for i in range(levels + 1))
    aliases = fan_out * levels
    if expanded <= MAX_YAML_NODES // 2 and aliases <= MAX_YAML_ALIASES:
        parse_yaml(text, "bomb.yaml")                 # small enough: parses
        return
    if expanded > 2 * MAX_YAML_NODES or aliases > MAX_YAML_ALIASES:
        msg = refused(text)
        assert "aliases" in msg or "values once its aliases are expanded" in msg


@SETTINGS
@given(depth=st.integers(MAX_YAML_DEPTH + 2, 60_000),
       kind=st.sampled_from(["seq", "map", "block", "mixed"]))
def test_deep_nesting_is_refused_without_recursion_error(depth, kind):
    if kind == "block":
        depth = min(depth, 500)                  # its indentation grows quadratically
    msg = refused(nested(depth, kind))
    assert "nested" in msg


@pytest.mark.parametrize("kind", ["seq", "map", "block", "mixed"])
def test_nesting_within_the_bound_parses(kind):
    parse_yaml(nested(MAX_YAML_DEPTH // 2 - 2, kind), "ok.yaml")


@pytest.mark.parametrize("text", [
    "a: &a [*a]\n", "a: &a {b: *a}\n", "a: &a [1, [2, *a]]\n",
    "a: &a\n  b: &b\n    c: *a\n",
])
def test_recursive_anchors_are_refused(text):
    assert "recursive document" in refused(text)


def test_deep_nesting_built_from_aliases_is_refused():
    """Each level within the bound, the expansion beyond it."""
    lines = ["l0: &l0 " + "[" * 40 + "1" + "]" * 40]
    lines += [f"l{i}: &l{i} [*l{i - 1}]" for i in range(1, 40)]
    assert "deeper" in refused("\n".join(lines) + "\n")


def test_many_aliases_are_refused():
    text = "x: &x 1\ny: [" + ", ".join(["*x"] * (MAX_YAML_ALIASES + 1)) + "]\n"
    assert f"more than {MAX_YAML_ALIASES} YAML aliases" in refused(text)


def test_a_merge_key_still_works():
    data = parse_yaml("base: &b {load: 0.5, seed: 1}\nover:\n  <<: *b\n  load: 0.9\n", "m.yaml")
    assert data["over"] == {"load": 0.9, "seed": 1}


@pytest.mark.parametrize("kind", ["scenario", "reproduction", "training config"])
@pytest.mark.parametrize("shape", ["laughs", "nested", "recursive", "size"])
def test_every_config_file_kind_is_bounded_through_the_cli(tmp_path, capsys, kind, shape):
    """The CLI prints the one line and exits 2, before anything runs or is written."""
    text = {"laughs": laughs(10, 9, True), "nested": nested(50_000, "seq"),
            "recursive": "a: &a [*a]\n",
            "size": "# " + "x" * (MAX_CONFIG_BYTES + 10) + "\nname: big\n"}[shape]
    f = tmp_path / "bomb.yaml"
    f.write_text(text)
    argv = {"scenario": ["show-scenario", str(f)],
            "reproduction": ["reproduce", str(f), "--out", str(tmp_path / "o"), "--quiet"],
            "training config": ["train", str(f), "--out", str(tmp_path / "o")]}[kind]
    start = time.perf_counter()
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and time.perf_counter() - start < 10
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(f) in lines[0], err
    assert "Traceback" not in err and "RecursionError" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("special", ["dir", "fifo", "devzero"])
def test_a_special_file_as_a_config_says_what_it_is(tmp_path, special):
    path = {"dir": tmp_path, "devzero": "/dev/zero"}.get(special, tmp_path / "pipe.yaml")
    if special == "fifo":
        os.mkfifo(path)
    with pytest.raises(ConfigError) as e:
        load_scenario(str(path))
    what = {"dir": "a directory", "fifo": "a named pipe", "devzero": "a device"}[special]
    assert f"is {what}" in str(e.value) and "not found" not in str(e.value)


# ---- traces ------------------------------------------------------------------------------

def write_trace(path, body: bytes, gz: bool) -> None:
    if gz:
        with gzip.open(path, "wb", compresslevel=1) as fh:
            fh.write(body)
    else:
        path.write_bytes(body)


@pytest.fixture
def small_bounds(monkeypatch):
    """Bounds small enough that tests cross them with small files (the reading code is the
    same; the real values are checked by their own tests below)."""
    monkeypatch.setattr(traces, "MAX_TRACE_LINE_BYTES", 64)
    monkeypatch.setattr(traces, "MAX_TRACE_LINES", 50)
    monkeypatch.setattr(traces, "MAX_TRACE_BYTES", 1500)


@SETTINGS
@given(line_bytes=st.integers(65, 5_000), at_line=st.integers(2, 40), gz=st.booleans(),
       series=st.booleans())
def test_a_long_line_is_refused_with_its_line(tmp_path, small_bounds, line_bytes, at_line, gz,
                                              series):
    head = b"time_s,value\n" if series else JOB_HEAD.encode()
    rows = [f"{i},1\n" if series else f"{i},1,1,1\n" for i in range(at_line)]
    body = head + "".join(rows[:at_line - 2]).encode() + b"1" * line_bytes + b"\n" \
        + rows[-1].encode()
    p = tmp_path / f"t{gz}.csv"
    write_trace(p, body, gz)
    with pytest.raises(TraceError) as e:
        (read_series if series else read_job_trace)(p)
    assert str(e.value) == f"{p}:{at_line}: a line longer than 64 bytes; a trace row holds a " \
                           "few numbers"


@SETTINGS
@given(rows=st.integers(50, 400), gz=st.booleans())
def test_too_many_lines_or_bytes_are_refused(tmp_path, small_bounds, rows, gz):
    p = tmp_path / f"t{gz}.csv"
    write_trace(p, JOB_HEAD.encode() + b"0,1,1,1\n" * rows, gz)
    with pytest.raises(TraceError) as e:
        read_job_trace(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:") and "\n" not in msg
    assert "a trace's limit" in msg and ("lines" in msg or "bytes of text" in msg)


def test_within_the_bounds_a_trace_reads(tmp_path, small_bounds):
    p = tmp_path / "ok.csv.gz"
    write_trace(p, JOB_HEAD.encode() + b"0,1,1,1\n" * 20, True)
    assert read_job_trace(p).shape == (20, 4)


def test_a_gzip_bomb_with_one_huge_line_stops_at_the_real_bound(tmp_path):
    """The issue's case: a small gzip file holding a line of gigabytes (here 64 MiB, the same
    shape) fails at once, having decompressed one bounded line."""
    p = tmp_path / "bomb.csv.gz"
    with gzip.open(p, "wb", compresslevel=9) as fh:
        fh.write(JOB_HEAD.encode())
        block = b"9" * (1 << 20)
        for _ in range(64):
            fh.write(block)
    assert p.stat().st_size < 1 << 20
    start = time.perf_counter()
    with pytest.raises(TraceError, match=r"bomb.csv.gz:2: a line longer than 4,096 bytes"):
        read_job_trace(p)
    assert time.perf_counter() - start < 2


def test_a_gzip_bomb_of_many_short_lines_stops_at_the_real_bound(tmp_path):
    p = tmp_path / "lines.csv.gz"
    with gzip.open(p, "wb", compresslevel=1) as fh:
        fh.write(b"time_s,value\n")
        fh.write(b"\n" * (traces.MAX_TRACE_LINES + 10))
    with pytest.raises(TraceError, match=f"more than {traces.MAX_TRACE_LINES:,} lines"):
        read_series(p)


@pytest.mark.parametrize("special, says", [("dir", "is a directory"),
                                           ("fifo", "is a named pipe (FIFO)"),
                                           ("devzero", "is a device")])
def test_a_special_file_as_a_trace_says_what_it_is(tmp_path, special, says):
    """A directory, a named pipe or /dev/zero were "not found"; a pipe must not block."""
    path = {"dir": tmp_path, "devzero": "/dev/zero"}.get(special, tmp_path / "pipe.csv")
    if special == "fifo":
        os.mkfifo(path)
    for read in (read_job_trace, read_series):
        with pytest.raises(TraceError) as e:
            read(path)
        assert f"{path}: {says}, not a trace file" in str(e.value)


def test_a_fifo_trace_in_a_scenario_fails_before_any_episode(tmp_path, capsys):
    os.mkfifo(tmp_path / "cap.csv")
    (tmp_path / "s.yaml").write_text(
        "name: pipe\navailability: {generator: trace, mode: capacity, trace: cap.csv}\n")
    rc = main(["compare", "--env", str(tmp_path / "s.yaml"), "--policies", "fifo", "--seeds",
               "1", "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "is a named pipe (FIFO), not a trace file" in err
    assert not (tmp_path / "o").exists()


@SETTINGS
@given(quote=st.lists(st.booleans(), min_size=4, max_size=4), gz=st.booleans())
def test_quoted_numbers_in_a_csv_trace_read_as_numbers(tmp_path, quote, gz):
    """Item 7: ``"3600"`` is a number in CSV; it was refused as "not a number"."""
    def row(vals):
        return ",".join(f'"{v}"' if q else str(v) for v, q in zip(vals, quote, strict=True)) + "\n"
    p = tmp_path / f"q{gz}.csv"
    write_trace(p, (row(["submit_s", "map_input_bytes", "shuffle_bytes", "output_bytes"])
                    + row([0, 1e6, 2e6, 3]) + row([60, 5, 0, 7])).encode(), gz)
    assert read_job_trace(p).tolist() == [[0, 1e6, 2e6, 3], [60, 5, 0, 7]]
    s = tmp_path / f"s{gz}.csv"
    write_trace(s, (row(["time_s", "value", "x", "y"]) + row([0, 0.5, 0, 0])
                    + row([3600, 0.25, 0, 0])).encode(), gz)
    times, values = read_series(s)
    assert times.tolist() == [0, 3600] and values.tolist() == [0.5, 0.25]


@pytest.mark.parametrize("shape", ["laughs", "nested", "size", "list"])
def test_the_ship_tool_reads_a_runs_config_bounded(tmp_path, shape):
    """tools/ship_agent.py reads the run's config.yaml with the same bounds (one line, exit 1,
    before anything is copied)."""
    import subprocess
    import sys
    from pathlib import Path
    text = {"laughs": laughs(10, 9, False), "nested": nested(60_000, "seq"),
            "size": "x: " + "1" * (MAX_CONFIG_BYTES + 10), "list": "- 1\n- 2\n"}[shape]
    (tmp_path / "config.yaml").write_text(text)
    root = Path(__file__).resolve().parents[1]
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, str(root / "tools" / "ship_agent.py"), str(tmp_path),
                          "never-shipped", "--config", "x"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 1 and time.monotonic() - t0 < 60
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "config.yaml" in lines[0], \
        out.stderr
    assert not (root / "agents" / "pretrained" / "never-shipped.zip").exists()


@SETTINGS
@given(digits=st.integers(101, 20_000), hexa=st.booleans(), sign=st.sampled_from(["", "-", "+"]),
       field=st.sampled_from(["workload.load", "seed", "cluster.nodes"]))
def test_a_huge_integer_is_one_line_naming_the_file_and_line(tmp_path_factory, digits, hexa,
                                                             sign, field):
    """Python refuses to read an integer of more than 4,300 digits (ValueError) and a hex one
    of thousands of digits cannot be printed: each is refused as it is read."""
    number = sign + ("0x" + "f" * digits if hexa else "7" * digits)
    section, _, key = field.rpartition(".")
    text = (f"name: big\n{section}:\n  {key}: {number}\n" if section
            else f"name: big\n{key}: {number}\n")
    f = tmp_path_factory.mktemp("huge") / "big.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_scenario(str(f))
    msg = str(e.value)
    assert msg.startswith(f"{f}: line {3 if section else 2}:") and "digits" in msg, msg
    assert "\n" not in msg and len(msg) < 300


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\ufffe"])
def test_a_character_yaml_forbids_is_one_line_with_its_line(char):
    msg = refused(f"name: a\nworkload:\n  load: 0.5{char}\n")
    assert msg.startswith("bomb.yaml: line 3 ") and f"#x{ord(char):04x}" in msg, msg


@SETTINGS
@given(ends=st.sampled_from(["\n", "\r\n", "\r"]), bom=st.booleans(), gz=st.booleans(),
       nul_at=st.none() | st.integers(1, 4), rows=st.integers(2, 6))
def test_line_ends_a_bom_and_nul_bytes_in_a_trace(tmp_path, ends, bom, gz, nul_at, rows):
    """LF and CRLF read alike, with or without a byte-order mark; CR alone is named; a NUL byte
    is refused naming its line; never a raw error."""
    lines = [JOB_HEAD.strip()] + [f"{10 * i},100000000,10000000,10000000" for i in range(rows)]
    if nul_at is not None:
        at = min(nul_at, rows)
        lines[at] = lines[at][:3] + "\x00" + lines[at][3:]
    text = ("\ufeff" if bom else "") + ends.join(lines) + ends
    p = tmp_path / f"t-{len(ends)}-{bom}-{gz}-{nul_at}-{rows}.csv"
    write_trace(p, text.encode(), gz)
    if ends == "\r" and nul_at is None:
        with pytest.raises(TraceError, match="carriage return alone"):
            read_job_trace(p)
    elif nul_at is not None:                    # CR alone: one line, so the NUL is on line 1
        with pytest.raises(TraceError) as e:
            read_job_trace(p)
        line = 1 if ends == "\r" else min(nul_at, rows) + 1
        assert str(e.value).startswith(f"{p}:{line}: binary data (a NUL byte)")
    else:
        assert read_job_trace(p).shape == (rows, 4)


@SETTINGS
@given(exponent=st.integers(20, 308), field=st.sampled_from(["duration_s", "load"]))
def test_an_absurd_size_is_named_in_a_short_line(tmp_path_factory, exponent, field):
    """A finite but absurd figure (``duration_s: 1e308``) is refused by the size guard in one
    short line, its numbers in scientific notation past a quadrillion."""
    f = tmp_path_factory.mktemp("absurd") / "big.yaml"
    f.write_text(f"name: x\nworkload:\n  {field}: !!float 1e{exponent}\n")
    with pytest.raises(ConfigError) as e:
        load_scenario(str(f))
    msg = str(e.value)
    assert msg.startswith(f"{f}:") and "\n" not in msg and len(msg) < 400, msg
