"""``python -m nicbench.cli``: the same as the ``nicbench`` command."""

import sys

try:
    from nicbench.cli import main
except KeyboardInterrupt:      # Ctrl-C before main() holds it: one line, no traceback
    print("nicbench: interrupted; host settings were restored", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
