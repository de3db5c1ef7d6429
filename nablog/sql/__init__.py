"""SQL databases as nablog databases: PostgreSQL, SQLite and DuckDB by URL.

The room's modules, bottom up: :mod:`.connection` (URLs, drivers, placeholders, values),
:mod:`.catalog` (tables, keys, constraints and views as the database declares them),
:mod:`.schema` (tables and their constraints as nablog declarations and denials),
:mod:`.views` (SQL views as rules, through sqlglot), :mod:`.requests` (``INSERT``/``DELETE``/
``UPDATE`` on a view as a view-update request), :mod:`.store` (reading the tables, and the one
transaction an apply or an undo runs), :mod:`.server` (a throwaway PostgreSQL server for tests).
Nothing here is imported unless a URL is opened: the drivers are the ``sql`` extra.
"""

URL_SCHEMES = ("postgresql://", "postgres://", "sqlite:///", "duckdb:///")
"""How a database URL starts; anything else is a file."""


def is_url(text: str) -> bool:
    """Whether a command-line argument names a SQL database rather than a file.

    >>> is_url("postgresql://postgres@127.0.0.1/chinook"), is_url("chairs.lp")
    (True, False)
    """
    return str(text).startswith(URL_SCHEMES)
