"""``python -m nicbench.cli``: the same as the ``nicbench`` command."""

import sys

from nicbench.cli import main

sys.exit(main())
