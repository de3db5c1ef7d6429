"""Constraint checking, violations, correction tables and batch repair."""
