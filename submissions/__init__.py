"""Entries, their results and the boards (published entries ranked by benchmark's ranking)."""
