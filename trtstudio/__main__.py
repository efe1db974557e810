from trtstudio.cli import main

raise SystemExit(main())
