"""``python -m nablog.cli``: the `nablog` command."""

import sys

from . import main

sys.exit(main())
