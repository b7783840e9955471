"""`python -m forkwise.core.cli`: the command line without the desktop launcher."""

from forkwise.core.cli.main import main

raise SystemExit(main())
