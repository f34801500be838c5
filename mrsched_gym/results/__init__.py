"""Result files: atomic, world-readable writes, JSON/CSV helpers and the run folder of a sweep.

* :func:`atomic_write` writes a file via a temporary file and a rename (readers never see half a
  file), with the permissions of a normally created file (``0666 & ~umask``).
* :func:`json_safe` / :func:`csv_text` turn records into JSON (NaN -> null) and CSV.
* :func:`summarize` aggregates records by policy and scenario: mean and 95% confidence interval
  (Student's t over seeds, :func:`mean_ci95`) of every metric.
* :func:`write_results` writes ``records``/``summary`` as JSON and CSV.
* :class:`RunFolder` is the folder of one ``compare`` run: a lock so that two runs cannot write
  into one folder at once, a journal that receives every episode's record the moment it finishes
  (so an interrupted or failing run loses nothing and ``--resume`` skips finished episodes), and
  a staging folder in which data and plots of one run are written together and then put in place
  in one step (the previous folder's files are never mixed with the new run's).

A results folder holds a manifest of the files the run wrote
(:mod:`~mrsched_gym.results.manifest`); a folder is replaced only when everything in it is listed.

The parts: :mod:`~mrsched_gym.results.files` (durable writes, JSON / CSV),
:mod:`~mrsched_gym.results.manifest` (what a folder's run wrote),
:mod:`~mrsched_gym.results.records` (summaries, result files),
:mod:`~mrsched_gym.results.record_checks` (what a record may hold: the journal's checks) and
:mod:`~mrsched_gym.results.run_folder` (:class:`RunFolder`); every name of their ``__all__`` is
importable from here.
"""

from __future__ import annotations

from mrsched_gym.results import files, manifest, record_checks, records, run_folder
from mrsched_gym.results.files import *  # noqa: F403
from mrsched_gym.results.manifest import *  # noqa: F403
from mrsched_gym.results.record_checks import *  # noqa: F403
from mrsched_gym.results.records import *  # noqa: F403
from mrsched_gym.results.run_folder import *  # noqa: F403

__all__ = (files.__all__ + manifest.__all__ + record_checks.__all__ + records.__all__
           + run_folder.__all__)
