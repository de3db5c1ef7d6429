"""Shared fixtures: one Spark engine (and so one Spark session) for the whole test run.

``make test`` runs the suite on every core with pytest-xdist (``-n auto --dist loadgroup``). The
tests that use Spark in this process form one xdist group, so they all run on one worker and
share its one session; a worker that starts a Spark session without running any of them fails
the run (a Spark test the grouping missed would start a second JVM).

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


def _uses_spark(item: pytest.Item) -> bool:
    return "spark_engine" in getattr(item, "fixturenames", ()) or item.get_closest_marker("spark") is not None or "[spark" in item.nodeid


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _uses_spark(item):
            item.add_marker(pytest.mark.xdist_group("spark"))


_ran_spark_test = False


def pytest_runtest_setup(item):
    global _ran_spark_test
    _ran_spark_test = _ran_spark_test or _uses_spark(item)


@pytest.fixture(scope="session", autouse=True)
def one_spark_session_per_worker():
    """Fails the run (as an error in the last test's teardown, which xdist reports) when this
    process started a Spark session but ran no test of the spark group."""
    yield
    import sys

    spark_session = sys.modules.get("nablog.engines.spark.session")
    if getattr(spark_session, "_session", None) is not None and not _ran_spark_test:
        pytest.fail(
            "a Spark session was started in a process that ran no test of the spark group: the test that"
            " starts it needs the spark_engine fixture or @pytest.mark.spark (tests/conftest.py)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def spark_engine():
    pytest.importorskip("pyspark")
    from nablog.engines.spark import SparkEngine

    return SparkEngine()
