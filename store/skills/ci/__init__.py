"""`librarian lint`: the catalog's checks for CI, straight from files on disk (no library).

`check` finds skills under the paths given and turns their spec warnings and security
findings into `Issue`s with one severity scale (high, medium, low, info); `baseline` reads
the checked-in suppression file (each entry with a reason and an optional expiry) and
applies it; `reports` writes text, JSON or SARIF 2.1.0.
"""
