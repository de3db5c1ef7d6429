"""Shared fixtures: one Spark engine (and so one Spark session) for the whole test run.

Hypothesis profiles: the default is what CI runs; ``--hypothesis-profile=thorough`` runs every
property test with twenty times the examples (through ``tests.strategies.examples``) and no
deadline, for a campaign before a change lands.
"""

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@pytest.fixture(scope="session")
def spark_engine():
    pytest.importorskip("pyspark")
    from nablog.engines.spark import SparkEngine

    return SparkEngine()
