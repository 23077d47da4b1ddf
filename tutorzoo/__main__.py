"""``python -m tutorzoo``: the ``tutorzoo`` command."""

from tutorzoo.eval.cli import main

raise SystemExit(main())
