"""Paper reproductions: each experiment of a source paper as a runnable, checked file.

A reproduction file (``configs/reproductions/<name>.yaml``) gives a paper's experiment as cases
(scenario variants and the policies run on each), the numbers the paper states and its
qualitative claims; :mod:`~mrsched_gym.reproduce.cases` gives the schema and
:func:`load_reproduction` reads one.

:func:`run_reproduction` runs it (a fork pool over cases x policies x seeds, common random numbers;
:mod:`~mrsched_gym.reproduce.running`) and :func:`report` prints the tables
(:mod:`~mrsched_gym.reproduce.reporting`); ``mrsched-gym reproduce NAME`` does both.
:func:`summary_json` gives the machine-readable comparisons and claims (``--json PATH``;
:mod:`~mrsched_gym.reproduce.comparisons`) and :func:`validation_page` the page
``docs/validation.md`` (``--doc PATH``), both generated from the runs.
"""

from mrsched_gym.reproduce.cases import (
    JOB_METRICS,
    Case,
    CaseSpec,
    QuickSpec,
    Reproduction,
    ReproductionFile,
    bundled_reproductions,
    load_reproduction,
)
from mrsched_gym.reproduce.comparisons import (
    check_claims,
    paper_comparisons,
    paper_counterpart,
    summary_json,
    unit_of,
    value_of,
)
from mrsched_gym.reproduce.reporting import (
    claim_line,
    plot,
    report,
    reproduction_figure,
    validation_page,
)
from mrsched_gym.reproduce.running import (
    ADDED_LATER,
    input_digests,
    run_fingerprint,
    run_reproduction,
)

__all__ = ["ADDED_LATER", "JOB_METRICS", "Case", "CaseSpec", "QuickSpec", "Reproduction",
           "ReproductionFile", "bundled_reproductions", "check_claims", "claim_line",
           "input_digests", "load_reproduction", "paper_comparisons", "paper_counterpart", "plot",
           "report", "reproduction_figure", "run_fingerprint", "run_reproduction", "summary_json",
           "unit_of", "validation_page", "value_of"]
