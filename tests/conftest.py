import os

os.environ.setdefault("MPLBACKEND", "Agg")

import mrsched_gym  # noqa: E402,F401  (registers the ids)
