from app.entry import main

raise SystemExit(main())
