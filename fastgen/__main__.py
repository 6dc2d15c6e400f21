"""``python -m fastgen …``: see :mod:`fastgen.cli`."""

import sys

from .cli import main

sys.exit(main())
