"""Metrics over scored examples: pure functions over plain data, no Django, no torch."""
