"""The demo library: made-up skills (`skills/`) and transcripts (`sessions/`), built by
`build.build_demo` for `librarian demo`, the screenshots and the tests."""
