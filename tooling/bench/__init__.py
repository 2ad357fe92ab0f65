"""`librarian bench`: the issue budgets, measured, each phase in its own process."""
