"""Materialized views: maintenance, monitoring and subscriptions."""
