"""Fact stores and formats: .lp/.dl facts, CSV, Parquet, SQLite, directories; crash-safe commits.

>>> from nablog.io import open_source, Stores
>>> source = open_source("data/")                          # doctest: +SKIP
>>> facts = source.load()                                  # doctest: +SKIP
>>> Stores(["rules.lp"], [source]).commit(Delta.parse("+edge(1, 2)."))  # doctest: +SKIP
"""

from .base import FactSource, is_int_text, text_to_constant
from .csvfile import CsvFile, read_csv
from .directory import DirectorySource
from .factsfile import FactsFile, facts_of, rewrite_facts
from .parquetfile import ParquetFile, read_parquet
from .sources import open_source
from .sqlitedb import SqliteDatabase
from .stores import Stores

__all__ = [
    "CsvFile", "DirectorySource", "FactSource", "FactsFile", "ParquetFile", "SqliteDatabase", "Stores",
    "facts_of", "is_int_text", "open_source", "read_csv", "read_parquet", "rewrite_facts", "text_to_constant",
]
