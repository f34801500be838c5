"""Build the compact trace copies shipped in ``mrsched_gym/data/traces`` from ``../shared/data``.

Run from the repository root: ``python tools/build_traces.py [DATA_DIR]``. The outputs are
committed; the package never reads ``../shared`` or the network at run time. Every output keeps
the values of its source (only unit conversions, aggregation and column selection, stated below and
in
``mrsched_gym/data/traces/ATTRIBUTION.md``).

* ``swim_fb2009_day0.csv.gz`` / ``_day1``: SWIM Facebook 2009 samples ``_0`` and ``_1``: columns
  ``submit_s,map_input_bytes,shuffle_bytes,output_bytes`` (the job id and the gap column dropped).
* ``nasa_http_1995_5min.csv.gz``: NASA-HTTP request rate, ``time_s,requests_per_s`` in 5-minute
  means from 1995-07-01 00:00 (UTC-4) up to the July log's end (1995-07-28 13:30): the one
  continuous stretch (the August part follows a 3-day gap and holds the 38 h outage).
* ``google2019_cpu_5min.csv.gz``: Google 2019 cell, ``time_s,avg_cpu`` every 300 s (28 days).
* ``pvwatts_golden_hourly.csv.gz``: PVWatts Golden CO, ``time_s,ac_fraction`` = AC output / 3,333 W
  (the inverter clip), hourly for the typical year from Jan 1 00:00.
* ``aloja_hibench_tasks.csv.gz``: ALOJA HiBench task records,
  ``job,type,duration_s,hdfs_bytes_read`` for MAP and REDUCE tasks with a non-negative duration
  (clock skew makes a few negative).
* ``aloja_hibench_execs.csv.gz``: ALOJA executions, ``bench,net,disk,exe_time_s``.
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from datetime import datetime
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "mrsched_gym" / "data" / "traces"


def _write(name: str, header: str, rows: list[tuple]) -> None:
    buf = io.StringIO()
    buf.write(header + "\n")
    for r in rows:
        buf.write(",".join(_fmt(v) for v in r) + "\n")
    # mtime=0: the gzip bytes depend only on the content (reproducible builds).
    with open(OUT / name, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
        gz.write(buf.getvalue().encode())
    print(f"{name}: {len(rows)} rows, {(OUT / name).stat().st_size / 1024:.0f} KiB")


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def swim(data: Path) -> None:
    for k in (0, 1):
        rows = []
        src = data / "swim-fb2009" / f"FB-2009_samples_24_times_1hr_{k}.tsv"
        for line in src.read_text().splitlines():
            if line.strip():
                c = line.split("\t")
                rows.append((int(c[1]), int(c[3]), int(c[4]), int(c[5])))
        _write(f"swim_fb2009_day{k}.csv.gz", "submit_s,map_input_bytes,shuffle_bytes,output_bytes",
               rows)


def nasa(data: Path) -> None:
    t0 = datetime(1995, 7, 1)
    end = datetime(1995, 7, 28, 13, 30)
    sums: dict[int, list[float]] = {}
    with open(data / "nasa-http-1995" / "nasa_http_1995_requests_per_minute.csv") as fh:
        for row in csv.DictReader(fh):
            t = datetime.strptime(row["minute_start_utc_minus4"], "%Y-%m-%d %H:%M")
            if t >= end:
                break
            b = int((t - t0).total_seconds()) // 300
            acc = sums.setdefault(b, [0.0, 0.0])
            acc[0] += float(row["requests"])
            acc[1] += float(row["seconds_covered"])
    rows = [(b * 300, acc[0] / acc[1]) for b, acc in sorted(sums.items()) if acc[1] > 0]
    _write("nasa_http_1995_5min.csv.gz", "time_s,requests_per_s", rows)


def google(data: Path) -> None:
    with open(data / "google2019-cluster-usage" / "instance_usage_grouped_300_seconds_month.csv") \
            as fh:
        rows = [(i * 300, float(r["avg_cpu"])) for i, r in enumerate(csv.DictReader(fh))]
    _write("google2019_cpu_5min.csv.gz", "time_s,avg_cpu", rows)


def pvwatts(data: Path) -> None:
    lines = (data / "pvwatts-golden-co" / "pvwatts_8760_rackmount.csv").read_text().splitlines()
    rows = []
    for line in lines[18:]:
        c = line.split(",")
        if not c[0].strip().isdigit():
            continue
        rows.append((len(rows) * 3600, round(float(c[-1]) / 3333.0, 5)))
    assert len(rows) == 8760, len(rows)
    _write("pvwatts_golden_hourly.csv.gz", "time_s,ac_fraction", rows)


def aloja(data: Path) -> None:
    rows = []
    fmt = "%Y-%m-%d %H:%M:%S"
    with open(data / "aloja-hibench" / "aloja_job_tasks.csv") as fh:
        for r in csv.DictReader(fh):
            if r["TASK_TYPE"] not in ("MAP", "REDUCE") or not r["START_TIME"]:
                continue
            d = (datetime.strptime(r["FINISH_TIME"], fmt)
                 - datetime.strptime(r["START_TIME"], fmt)).total_seconds()
            if d < 0:
                continue
            rows.append((r["JOBID"], r["TASK_TYPE"].lower(), int(d),
                         int(r["HDFS_BYTES_READ"] or 0)))
    _write("aloja_hibench_tasks.csv.gz", "job,type,duration_s,hdfs_bytes_read", rows)
    with open(data / "aloja-hibench" / "aloja_execs.csv") as fh:
        ex = [(r["bench"], r["net"], r["disk"], float(r["exe_time"])) for r in csv.DictReader(fh)]
    _write("aloja_hibench_execs.csv.gz", "bench,net,disk,exe_time_s", ex)


def main() -> None:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).resolve().parents[2] / "shared" / "data"
    OUT.mkdir(parents=True, exist_ok=True)
    swim(data)
    nasa(data)
    google(data)
    pvwatts(data)
    aloja(data)


if __name__ == "__main__":
    main()
