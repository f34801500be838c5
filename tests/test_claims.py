"""The claim rules of :mod:`mrsched_gym.reproduce.claims` on hand-made records, and how the
validation page counts them."""

import pytest

from mrsched_gym.reproduce import Reproduction, validation_page
from mrsched_gym.reproduce.claims import check_claim, paired_test


def seeds(*values):
    return dict(enumerate(values))


def test_a_lower_mean_is_not_enough_without_significance():
    better, worse = seeds(1.0, 5.0, 1.0, 5.0), seeds(4.0, 3.0, 4.0, 3.0)   # mean 3 vs 3.5
    assert not paired_test(better, worse, 0.0)["holds"]
    assert paired_test(better, worse, 0.0, paired=False)["holds"]          # quick: on the mean
    assert paired_test(seeds(1.0, 1.1, 0.9, 1.0), seeds(2.0, 2.2, 1.9, 2.1), 0.0)["holds"]


def test_at_least_a_margin_lower_needs_the_interval_below_zero():
    worse = seeds(10.0, 10.0, 10.0, 10.0)
    assert paired_test(seeds(6.0, 6.1, 5.9, 6.0), worse, -0.36)["holds"]      # 40% lower
    assert not paired_test(seeds(6.6, 6.5, 6.7, 6.6), worse, -0.36)["holds"]  # 34% lower
    # a mean 40% lower but a noisy one: not shown
    assert not paired_test(seeds(1.0, 11.0, 1.0, 11.0), worse, -0.36)["holds"]


def test_within_a_margin_needs_the_upper_end_of_the_interval_under_it():
    worse = seeds(10.0, 10.0, 10.0, 10.0)
    assert paired_test(seeds(10.2, 10.1, 10.3, 10.2), worse, 0.05)["holds"]   # 2% above
    # mean 4% above (inside 5%) but the interval reaches past the margin: not shown
    assert not paired_test(seeds(8.0, 12.8, 8.0, 12.8), worse, 0.05)["holds"]
    assert not paired_test(seeds(10.7, 10.6, 10.8, 10.7), worse, 0.05)["holds"]


def records(values: dict) -> list[dict]:
    """``{(case, policy): [per-seed values]}`` -> records of metric ``m``."""
    return [{"case": c, "policy": p, "seed": s, "m": v}
            for (c, p), vals in values.items() for s, v in enumerate(vals)]


def test_a_sweep_claim_is_reproduced_where_the_paper_says_and_counts_every_case():
    recs = records({("a", "x"): [1, 1.1, 0.9], ("a", "y"): [2, 2.1, 1.9],
                    ("b", "x"): [3, 3.1, 2.9], ("b", "y"): [2, 2.1, 1.9]})
    claim = {"text": "x is lower", "metric": "m", "better": "x", "worse": ["y"], "cases": "all"}
    c = check_claim(claim, ["a", "b"], recs)
    assert (c["cases_held"], c["cases_total"], c["holds"]) == (1, 2, False)
    c = check_claim({**claim, "holds_where": ["a"]}, ["a", "b"], recs)
    assert c["holds"] and c["cases_total"] == 2


def test_validation_summary_counts_calibration_checks_apart_from_claims():
    recs = records({("a", "x"): [1, 1.1, 0.9], ("a", "y"): [2, 2.1, 1.9]})
    rep = Reproduction(
        name="toy", title="t", source="s", description="d", cases=[], metrics=["m"],
        job_metrics=[], seeds=3, paper=[], claims=[
            {"text": "claim", "metric": "m", "better": ["a", "y"], "worse": [["a", "x"]]},
            {"text": "check", "metric": "m", "better": ["a", "x"], "worse": [["a", "y"]],
             "kind": "calibration"}])
    rep.cases = [type("C", (), {"name": "a"})()]
    page = validation_page([(rep, recs)])
    assert "| [`toy`](#toy) | s | 0 of 1 | 1 of 1 | 0 |" in page


@pytest.mark.parametrize("tol", [0.0, -0.2, 0.2])
def test_no_seeds_in_common_never_holds(tol):
    assert not paired_test(seeds(1.0), {5: 2.0}, tol)["holds"]


def test_an_unseparated_difference_reports_the_seeds_it_needs_not_a_verdict():
    from mrsched_gym.reproduce import claim_line
    from mrsched_gym.reproduce.claims import MAX_SEEDS, seeds_needed
    # differences -1, +0.5, -0.2, -0.6: mean -0.325, sd 0.640; the 95% half-width
    # t(n-1) x 0.640 / sqrt(n) falls below 0.325 first at n = 18 (17 leaves 0.329)
    d = [-1.0, 0.5, -0.2, -0.6]
    assert seeds_needed(d, 0.0) == 18
    assert seeds_needed([1.0, 2.0], 0.0) is None          # the other side: no seeds show it
    assert seeds_needed([-1.0], 0.0) is None               # one seed: no spread to go by
    assert seeds_needed([-1e-6, 1e-6, -1e-6, 2e-6], 0.0) is None
    assert seeds_needed([-1e-4, 1.0, -1.0, -1e-4], 0.0) == MAX_SEEDS
    better, worse = seeds(1.0, 1.5, 0.8, 0.4), seeds(2.0, 1.0, 1.0, 1.0)
    t = paired_test(better, worse, 0.0)
    assert not t["holds"] and t["seeds_needed"] == 18
    assert paired_test(better, worse, 0.0, paired=False)["seeds_needed"] is None   # quick run
    recs = records({("a", "x"): [1.0, 1.5, 0.8, 0.4], ("a", "y"): [2.0, 1.0, 1.0, 1.0],
                    ("b", "x"): [3.0, 3.1, 2.9, 3.0], ("b", "y"): [2.0, 2.1, 1.9, 2.0]})
    claim = {"text": "x is lower", "metric": "m", "better": "x", "worse": ["y"], "cases": "all"}
    c = check_claim(claim, ["a", "b"], recs)
    assert [p["seeds_needed"] for p in c["per_case"]] == [[18], [None]]
    line = claim_line(c)
    assert "a: 0.925 vs 1.25 (not separated at 4 seeds: about 18 needed)" in line
    assert "b: 3 vs 2 (no)" in line


def test_a_claims_cause_is_one_sentence_of_text():
    from mrsched_gym.config import ConfigError
    from mrsched_gym.reproduce.claims import claim_cases
    claim = {"text": "x", "metric": "m", "better": ["a", "x"], "worse": [["a", "y"]]}
    assert claim_cases({**claim, "cause": "the placement splits jobs"}, ["a"], "f")
    with pytest.raises(ConfigError, match="claims\\[0\\]: cause: must be one sentence of text"):
        claim_cases({**claim, "cause": 3}, ["a"], "f.yaml: claims[0]")
