"""The one base class for problems a person can act on. The CLI turns any of them into a
single line and a non-zero exit; importing this module costs nothing."""


class LibrarianError(Exception):
    """A bad argument, unknown name, broken file, unavailable model, ..."""
