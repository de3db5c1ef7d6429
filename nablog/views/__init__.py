"""Materialized views: update propagation (induced updates), maintenance and monitoring."""

from .propagation import METHODS, propagate

__all__ = ["METHODS", "propagate"]
