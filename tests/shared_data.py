"""Where the shared real datasets are: ``$NABLOG_SHARED_DATA``, else ``shared/data`` beside the
repository (the project's layout), else ``/work/shared/data`` (where a clone elsewhere on the
development machine still finds them). Tests that need them skip when none exists."""

import os
from pathlib import Path


def _find() -> Path:
    given = os.environ.get("NABLOG_SHARED_DATA")
    candidates = [Path(given)] if given else []
    candidates += [Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data")]
    return next((p for p in candidates if p.is_dir()), candidates[0])


DATA = _find()
