"""``python -m mrsched_gym.cli``: the ``mrsched-gym`` command."""

import sys

from mrsched_gym.cli.parser import main

if __name__ == "__main__":
    sys.exit(main())
