"""The thesis ch. 4 reproduction's jobs are calibrated to Table 4.1's times in isolation.

Each job of ``configs/reproductions/thesis-ch4-ras.yaml`` runs alone on the reproduction's
cluster through ``tools/calibrate_thesis_ch4.py`` (the code path the calibration fits with), at
its fastest static slot count (thesis 4.2.6), and its mean over the reproduction's seeds must
match Table 4.1; the file's work must be what the script's work model gives.
"""

import pytest

#: The script under test, tools/calibrate_thesis_ch4.py (conftest.py loads it as ``cal``).
CALIBRATION = "calibrate_thesis_ch4"


def test_calibration_ch4_mean_time_alone_matches_table_4_1(cal, scenario, jobs):
    """Table 4.1 (length in isolation): J1 2,500 s, J8 350, J9 250, J2 500, J6 750, J7 2,500,
    J3 400, J4 280, J5 50; the mean over seeds 0-4 within 5% (the fit lands within 1%)."""
    assert set(jobs) == set(cal.THESIS_ALONE_S)
    for label, spec in jobs.items():
        times = cal.alone_times(scenario, spec)
        assert cal.mean(times) == pytest.approx(cal.THESIS_ALONE_S[label], rel=0.05), (label,
                                                                                       times)


def test_calibration_ch4_uncalibrated_profiles_do_not_match(cal, scenario, jobs):
    """The check can fail: at the profiles' work (scale 1, the file before the calibration had
    no work overrides) Combine J7 takes far less than 2,500 s alone and Sort J9 far more than
    250 s (its reduces carried a fixed 120 s each)."""
    j7 = cal.mean(cal.alone_times(scenario, cal.scaled(jobs["J7"], 1.0)))
    assert j7 < 0.5 * cal.THESIS_ALONE_S["J7"], j7
    j9 = cal.mean(cal.alone_times(scenario, jobs["J9"].__class__(
        type="sort", n_maps=48, n_reduces=20, label="J9")))
    assert j9 > 2 * cal.THESIS_ALONE_S["J9"], j9


def test_calibration_ch4_work_follows_the_model(cal, scenario):
    """Every job's map and reduce work are one scale of its profile (module docstring); Sort's
    reduce work per reduce is 30 s x scale per map of input over its reduces (4.2.6: the reduce
    phase grows with the input), not a fixed 120 s."""
    for spec in scenario.workload.jobs:
        s = cal.scale_of(spec)
        model = cal.scaled(spec, s)
        assert spec.map_work_s == pytest.approx(model.map_work_s, abs=0.01), spec.label
        assert spec.reduce_work_s == pytest.approx(model.reduce_work_s, rel=1e-3), spec.label
        if spec.type == "sort":
            assert cal.sort_reduce_per_map_s() == pytest.approx(30.0)
            assert spec.reduce_work_s == pytest.approx(
                s * 30.0 * spec.n_maps / spec.n_reduces, rel=1e-3), spec.label


def test_calibration_ch4_file_is_the_scripts_fit(cal, scenario, jobs):
    """The bundled numbers are the script's output: refitting the two shortest jobs (J5 and
    J9, a second or so) gives the file's work."""
    for label in ("J5", "J9"):
        fitted = cal.fit_scale(scenario, jobs[label], cal.THESIS_ALONE_S[label])
        assert cal.yaml_line(fitted) == cal.yaml_line(jobs[label])
