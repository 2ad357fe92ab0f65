"""The `librarian` command, one module per domain.

`main` builds the parser from the domain modules and dispatches; each domain module
(`skills`, `sessions`, `patterns`, `lifecycle`, …) registers its subcommands with
`register(subcommands)` and imports only `common` (printing, opening the library, errors)
and `store`. Nothing is imported here, so the MCP server can use `common` without loading
the whole CLI.
"""
