"""What goes wrong in team mode, each as one line a person can act on."""

from __future__ import annotations

from store.errors import LibrarianError


class TeamError(LibrarianError):
    """A team operation that cannot go on; nothing was changed locally."""


class HubUnavailable(TeamError):
    """The hub cannot be reached or refused the connection (host, password, database)."""


class HubSchemaError(TeamError):
    """The hub's schema is not one this librarian can use (newer, older, or missing)."""


class TeamNotConfigured(TeamError):
    """Team mode is off: no hub in config.toml."""
