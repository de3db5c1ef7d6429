"""Materialized views: update propagation (induced updates), maintenance and monitoring."""

from .monitor import MODES, Change, Monitor
from .propagation import METHODS, propagate
from .subscriptions import Subscription, SubscriptionClosed

__all__ = ["METHODS", "MODES", "Change", "Monitor", "Subscription", "SubscriptionClosed", "propagate"]
