"""Command line: mrsched-gym compare | benchmark | train | reproduce | demo | show-scenario |
list (python -m mrsched_gym works the same).

One module per subcommand or small group: :mod:`~mrsched_gym.cli.compare`,
:mod:`~mrsched_gym.cli.benchmark`, :mod:`~mrsched_gym.cli.train`,
:mod:`~mrsched_gym.cli.reproduce`, :mod:`~mrsched_gym.cli.browse` (demo, show-scenario, list),
what they share in :mod:`~mrsched_gym.cli.common`, and the parser and entry point
(:func:`build_parser`, :func:`main`) in :mod:`~mrsched_gym.cli.parser`.
"""

from mrsched_gym.cli.benchmark import agent_versions, check_agents, reference_labels
from mrsched_gym.cli.browse import list_data, list_table
from mrsched_gym.cli.common import (
    KEY_METRICS,
    as_number,
    check_world,
    parse_settings,
    pickle_notice,
    results_name,
    say_notes,
)
from mrsched_gym.cli.parser import build_parser, main
from mrsched_gym.cli.reproduce import reusable_reproduction

__all__ = ["KEY_METRICS", "agent_versions", "as_number", "build_parser", "check_agents",
           "check_world", "list_data", "list_table", "main", "parse_settings", "pickle_notice",
           "reference_labels", "results_name", "reusable_reproduction", "say_notes"]
