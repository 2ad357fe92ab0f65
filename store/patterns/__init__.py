"""Patterns: consolidation, classification, retrieval, graduation and decay (DESIGN §7)."""
