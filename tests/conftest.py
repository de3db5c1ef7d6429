"""Shared fixtures: one Spark engine (and so one Spark session) for the whole test run."""

import pytest


@pytest.fixture(scope="session")
def spark_engine():
    pytest.importorskip("pyspark")
    from nablog.engines.spark import SparkEngine

    return SparkEngine()
