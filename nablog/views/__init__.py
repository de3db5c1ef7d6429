"""Materialized views: update propagation (induced updates), maintenance and monitoring."""

from .monitor import MODES, Monitor
from .propagation import METHODS, propagate
from .subscriptions import Subscription, SubscriptionClosed

__all__ = ["METHODS", "MODES", "Monitor", "Subscription", "SubscriptionClosed", "propagate"]
