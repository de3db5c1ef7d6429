"""nablog: an abductive view-update and repair solver for deductive databases.

>>> import nablog
>>> db = nablog.Database.from_text("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y). e(1,2). e(2,3).")
>>> db.query("p(1, Y)")
[(1, 2), (1, 3)]
"""

from .database import Database, Violation
from .engines import get_engine
from .lang import Atom, Delta, NablogError, Program, Var, parse, parse_atom, parse_files

__version__ = "0.1.0"

__all__ = ["Atom", "Database", "Delta", "NablogError", "Program", "Var", "Violation", "get_engine", "parse", "parse_atom", "parse_files", "__version__"]
