"""``python -m mrsched_gym``: the ``mrsched-gym`` command."""

import sys

from mrsched_gym.cli import main

if __name__ == "__main__":
    sys.exit(main())
