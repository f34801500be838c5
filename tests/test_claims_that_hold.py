"""The claims reproduced on 2026-11-28 (docs/reproductions.json, 22 of 34 with the calibration
checks; the 22nd since ch. 5 runs the thesis's 10 seeds), listed by name: each must stay
expected to hold in its reproduction file (so ``tests/test_reproductions.py``'s full runs check
it, and ``reproduce --strict`` fails without it) and hold in the committed full run. A change
of a baseline's default reading (issue 49) may not lose one of them."""

import json
from pathlib import Path

import pytest

from mrsched_gym.reproduce import load_reproduction

ROOT = Path(__file__).resolve().parents[1]

HOLD_TODAY = [
    ("thesis-ch5-reverse", "Fig. 5.20 with multi-hour jobs: without f(t) Reverse-Adaptive "
     "performs like RAS and never worse (at most 5% more missed deadlines, with 95% confidence)"),
    ("late-speculation", "LATE lowers mean job response time against no speculation on a "
     "heterogeneous cluster with stragglers"),
    ("late-speculation", "Hadoop's native speculation lowers mean job response time against no "
     "speculation there"),
    ("late-speculation", "LATE lowers mean job response time against Hadoop's native "
     "speculation on a heterogeneous cluster"),
    ("mimp-interference", "calibration check: 6.2: under the MI policy the response time stays "
     "near its alone value (k_background = 0.05 bounds it at +5%)"),
    ("mimp-scheduling", "admission control lowers deadline misses under overload (rejected jobs "
     "counted as misses)"),
    ("mimp-scheduling", "admission control lowers the deadline penalty of the accepted jobs "
     "under overload (MIMP 5.3's count, shown beside the rejections)"),
    ("mrorchestrator", "the orchestrator lowers mean JCT below Fair's (REGRESSION)"),
    ("mrorchestrator", "the orchestrator lowers mean JCT below Fair's (UNIFORM)"),
    ("mrorchestrator", "REGRESSION beats UNIFORM"),
    ("pastorelli-preemption", "Fig. 2a: suspend's sojourn is close to kill's (within 10%)"),
    ("pastorelli-preemption", "Fig. 2a: suspend's sojourn is well below wait's"),
    ("pastorelli-preemption", "Fig. 2b: suspend's makespan is close to wait's (within 5%) and "
     "below kill's"),
    ("pastorelli-preemption", "Fig. 3-4: suspend degrades when memory must be swapped"),
    ("pastorelli-preemption", "Fig. 3a: even memory-hungry, suspend's sojourn stays within 20% "
     "of kill's (the paper's worst case)"),
    ("rds-case-study", "Fig. 2(b): FIFO misses J2 where RDS meets both deadlines"),
    ("rds-case-study", "Fig. 2(c): Fair misses J2 where RDS meets both deadlines"),
    ("rds-case-study", "RDS finishes J2 well before Fair does"),
    ("rds-evaluation", "RDS's deadline-miss penalty (Eq. 1) is at least 10% below EDF's"),
    ("thesis-ch3-adaptive", "Fig. 3.5 vs 3.6: with tight goals Adaptive still runs the Join J5 "
     "faster than Fair"),
    ("thesis-ch4-ras", "Fig. 4.3: low and high concurrency are worse (4 slots beat 1 and 8)"),
    ("thesis-ch4-ras", "Fig. 4.3: 4 slots is the best static configuration"),
]


@pytest.mark.parametrize(("name", "text"), HOLD_TODAY)
def test_a_claim_that_holds_today_is_still_expected_to_hold(name, text):
    claims = {c["text"]: c for c in load_reproduction(name).claims}
    assert text in claims, f"{name}: the claim {text!r} is gone from its file"
    assert claims[text].get("expect", "hold") == "hold", f"{name}: {text!r} expected to fail"


def test_the_committed_full_run_holds_every_one():
    summary = json.loads((ROOT / "docs" / "reproductions.json").read_text())
    held = {(c["reproduction"], c["claim"]) for c in summary["claims"] if c["holds"]}
    assert [c for c in HOLD_TODAY if c not in held] == []
