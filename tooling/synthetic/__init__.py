"""Synthetic skills, sessions and secrets, generated deterministically for the bench and tests."""
