"""Tooling around the library, outside its core: `librarian bench` (`bench/`), synthetic
libraries and sessions (`synthetic/`), the demo library (`demo/`) and the routing and redaction
evaluations (`evaluation/`). `store` and `widgets` never import it (an import-linter contract);
it is headless like `store`, and what it times in the app runs in `app/bench_app.py`."""
