"""Skill lifecycle: outcomes, health and drift (DESIGN §8)."""
