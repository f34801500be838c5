"""``mrsched-gym reproduce``: run a reproduction and check its claims, reusing a finished run
whose fingerprint matches."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def reproduce_command(args: argparse.Namespace) -> int:
    """Run a reproduction (:mod:`mrsched_gym.reproduce`) and report its claims."""
    import time

    from mrsched_gym.reproduce import (
        bundled_reproductions,
        check_claims,
        load_reproduction,
        plot,
        report,
        run_fingerprint,
        run_reproduction,
        summary_json,
        validation_page,
    )
    from mrsched_gym.results import (
        add_to_manifest,
        atomic_write,
        check_writable_folder,
        json_safe,
        safe_child,
    )

    if args.list or not args.names:
        for name in bundled_reproductions():
            rep = load_reproduction(name)
            print(f"{name:24s} {rep.title}  [{rep.source}]")
        return 0
    names = bundled_reproductions() if args.names == ["all"] else args.names
    reps = [load_reproduction(name, quick=args.quick) for name in names]   # all checked first
    for rep in reps:                         # and every output path, before anything runs
        check_writable_folder(safe_child(args.out, rep.name, "reproduction name"), OUTPUTS)
    for extra, flag in ((args.json, "--json"), (args.doc, "--doc")):
        if extra:
            check_output_file(Path(extra), flag)
    failed = 0
    results = []
    summary: dict[str, list] = {"comparisons": [], "claims": []}
    for rep in reps:
        if args.seeds:
            rep.seeds = args.seeds
        t0 = time.perf_counter()
        out = safe_child(args.out, rep.name, "reproduction name")
        fingerprint = run_fingerprint(rep)
        records = reusable_reproduction(out, fingerprint) if args.reuse else None
        if records is None:
            records = run_reproduction(rep, workers=args.workers, progress=not args.quiet)
        text = report(rep, records)
        print(text)
        atomic_write(out / "records.json", json.dumps(json_safe(records), indent=1))
        atomic_write(out / "run.json", json.dumps(fingerprint, indent=1))
        atomic_write(out / "report.md", text + "\n")
        written = [out / "records.json", out / "report.md"]
        if not args.no_plots:
            p = plot(rep, records, out / "figure.png")
            if p:
                written.append(p)
        add_to_manifest(out, [p.name for p in written] + ["run.json"])
        print(f"wrote {', '.join(str(p) for p in written)} ({time.perf_counter() - t0:.1f} s)\n")
        claims = check_claims(rep, records)
        failed += sum(c["holds"] != (c["expect"] != "fail") for c in claims)
        results.append((rep, records))
        for key, rows in summary_json(rep, records, claims).items():
            summary[key] += rows
    if args.json:
        print(f"wrote {atomic_write(args.json, json.dumps(json_safe(summary), indent=1))}")
    if args.doc:
        print(f"wrote {atomic_write(args.doc, validation_page(results))}")
    return 1 if failed and args.strict else 0


#: The files ``reproduce`` writes into ``--out/NAME`` (listed in its manifest); any other file
#: there is kept.
OUTPUTS = ("records.json", "run.json", "report.md", "figure.png")


def check_output_file(path: Path, flag: str) -> None:
    """Refuse, before anything runs, an output file whose folder cannot hold it or that is a
    folder."""
    from mrsched_gym.errors import InputError
    from mrsched_gym.results import check_writable_folder
    if path.is_dir():
        raise InputError(f"{flag} {path}: a folder, not a file")
    check_writable_folder(path.parent, what=f"the folder of {flag}")


def as_episode_record(rec: dict) -> dict:
    """A reproduction record (``case``, ``policy``, ``seed`` and the metrics) in the shape the
    journal checks take: its case as the scenario, with the return and step count it does not
    keep, and an undefined metric (NaN, read back from null) as null."""
    plain = {k: None if isinstance(v, float) and v != v else v for k, v in rec.items()}
    return {"return": 0.0, "steps": 0, **plain, "scenario": rec.get("case")}


def reusable_reproduction(out: Path, fingerprint: dict) -> list[dict] | None:
    """The records of an earlier run in ``out`` when its ``run.json`` equals ``fingerprint``
    (same cases, seeds, version and file contents), else ``None``, saying why it is not reused
    (what changed, or which file is unreadable or cut)."""
    from mrsched_gym.results import check_record, header_diff, nan_for_null
    run, recs = out / "run.json", out / "records.json"
    if not run.is_file() or not recs.is_file():
        return None
    try:
        old = json.loads(run.read_text(encoding="utf-8"))
        records = json.loads(recs.read_text(encoding="utf-8"), object_hook=nan_for_null)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        where = f" (line {e.lineno})" if isinstance(e, json.JSONDecodeError) else ""
        print(f"note: not reusing {out}: {getattr(e, 'filename', None) or 'a file'} there is "
              f"unreadable or cut{where}: {type(e).__name__}; running again", file=sys.stderr)
        return None
    if old != fingerprint:
        changes = header_diff(old, fingerprint) if isinstance(old, dict) else ["run.json"]
        print(f"note: not reusing {out}: {'; '.join(changes[:4])}; running again",
              file=sys.stderr)
        return None
    bad = [i for i, r in enumerate(records if isinstance(records, list) else [None])
           if not isinstance(r, dict) or check_record(as_episode_record(r))]
    if bad:
        print(f"note: not reusing {out}: records.json entry {bad[0]} is not an episode "
              "record; running again", file=sys.stderr)
        return None
    print(f"reusing the records of {out} (same cases, seeds, version and file contents)")
    return records
