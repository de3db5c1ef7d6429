"""Shared fixtures: one Spark engine (and so one Spark session) for the whole test run.

``make test`` runs the suite on every core with pytest-xdist (``-n auto``), scheduled by
:class:`Scopes` below: every test whose id names spark is one unit of work, so the Spark tests
all run on one worker and share its one session; a module whose last test (``test_zz_…``) counts
what the module's tests did is one unit too; every other test is a unit of its own. A test that
uses Spark must say so in its id (a test of a Spark module, or ``spark`` in its name or
parameters): collection refuses one that does not, and a worker that starts a Spark session
without running a test of that unit fails the run.

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
    return "spark_engine" in getattr(item, "fixturenames", ()) or item.get_closest_marker("spark") is not None


def _in_spark_unit(nodeid: str) -> bool:
    return "spark" in nodeid.lower()


def pytest_collection_modifyitems(config, items):
    unnamed = [item.nodeid for item in items if _uses_spark(item) and not _in_spark_unit(item.nodeid)]
    if unnamed:
        raise pytest.UsageError(
            "these tests use Spark but their ids do not say so, so they could run on a second worker with"
            " a second Spark session: " + ", ".join(unnamed) + " (name them with spark; tests/conftest.py)"
        )


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist: the work split into units as :class:`Scopes` says (whatever ``--dist``)."""
    from xdist.scheduler import LoadScopeScheduling

    class Scopes(LoadScopeScheduling):
        """Units of work: the Spark tests, each counted module, and every other test alone.
        (pytest-xdist's own ``loadgroup`` marks do not reach its scheduler under pytest 9.)"""

        counted: set[str] = set()

        def schedule(self) -> None:
            collected = self.collection or next(iter(self.registered_collections.values()), [])
            self.counted = {nodeid.split("::", 1)[0] for nodeid in collected if "::test_zz_" in nodeid}
            super().schedule()

        def _split_scope(self, nodeid: str) -> str:
            if _in_spark_unit(nodeid):
                return "spark"
            module = nodeid.split("::", 1)[0]
            return module if module in self.counted else nodeid

    return Scopes(config, log)


_ran_spark_test = False


def pytest_runtest_setup(item):
    global _ran_spark_test
    _ran_spark_test = _ran_spark_test or _in_spark_unit(item.nodeid)


@pytest.fixture(scope="session", autouse=True)
def one_spark_session_per_worker():
    """Fails the run (as an error in the last test's teardown, which xdist reports) when this
    process started a Spark session but ran none of the Spark tests."""
    yield
    import sys

    spark_session = sys.modules.get("nablog.engines.spark.session")
    if getattr(spark_session, "_session", None) is not None and not _ran_spark_test:
        pytest.fail(
            "a Spark session was started in a process that ran none of the Spark tests: the test that"
            " starts it needs the spark_engine fixture or @pytest.mark.spark and spark in its id (tests/conftest.py)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def spark_engine():
    pytest.importorskip("pyspark")
    from nablog.engines.spark import SparkEngine

    return SparkEngine()
