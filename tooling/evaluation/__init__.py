"""Evaluations over hand-written or generated sets: routing (`suggest`) and redaction."""
