"""``python -m rebelboost``: the command line (same as the ``rebelboost`` script)."""

from rebelboost.cli import main

raise SystemExit(main())
