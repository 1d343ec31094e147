"""`python -m nineplan_adapters` is the `nineplan` command."""

from nineplan_adapters.cli import main

raise SystemExit(main())
