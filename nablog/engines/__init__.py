"""Engines: evaluate a stratified program over base facts. `python` (embedded), `clingo`, `spark`."""

from __future__ import annotations

from ..lang import NablogError
from .base import Engine, Model, Prepared, prepare
from .python import PythonEngine

ENGINES = ("python", "clingo", "spark")


def get_engine(name: str = "python", **options) -> Engine:
    """The engine called ``name``; ``options`` go to its constructor (e.g. ``master`` for spark).

    >>> get_engine("python").name
    'python'
    """
    if name == "python":
        return PythonEngine(**options)
    if name == "clingo":
        from .clingo import ClingoEngine

        return ClingoEngine(**options)
    if name == "spark":
        from .spark import SparkEngine

        return SparkEngine(**options)
    raise NablogError(f"unknown engine {name!r}", hint="choose one of " + ", ".join(ENGINES))


__all__ = ["ENGINES", "Engine", "Model", "Prepared", "PythonEngine", "get_engine", "prepare"]
