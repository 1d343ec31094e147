"""`python -m nineplan_adapters` is the `nineplan` command."""

from nineplan_adapters.entrypoints.console import main

raise SystemExit(main())
