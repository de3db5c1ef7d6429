"""Tables and their constraints as nablog statements: columns, keys, foreign keys and denials.

``PRIMARY KEY`` and ``UNIQUE`` become ``#key``, ``FOREIGN KEY`` ``#fk``, a ``NOT NULL`` column
of a type other than text a denial of ``""`` (nablog's null; an empty text is a value), and a
``CHECK`` whose condition translates (comparisons, AND, OR, NOT, IN, IS NULL on the table's
columns) the denials of its negation. A CHECK that does not translate is left to the database,
which enforces it when a change is applied (the transaction then fails and changes nothing).

>>> from nablog.sql.catalog import Catalog, Column, Table
>>> album = Table("Album", [Column("AlbumId", "integer", "int", False), Column("Title", "text", "text", False),
...                         Column("ArtistId", "integer", "int", True)], ("AlbumId",), [], [(("ArtistId",), "Artist", ("ArtistId",))], ["AlbumId > 0"])
>>> artist = Table("Artist", [Column("ArtistId", "integer", "int", False)], ("ArtistId",))
>>> for s in table_statements(Catalog("postgres", {"Album": album, "Artist": artist}, [])): print(s)
#columns album(albumid, title, artistid).
#key album: albumid.
#fk album: artistid -> artist: artistid.
#constraint not_null_album__albumid :- album(Albumid, _, _), Albumid = "".
#constraint check_album_1 :- album(Albumid, Title, Artistid), Albumid <= 0.
#columns artist(artistid).
#key artist: artistid.
#constraint not_null_artist__artistid :- artist(Artistid), Artistid = "".
"""

from __future__ import annotations

from ..lang import Atom, Comparison, Denial, Literal, Var
from ..lang.ast import ColumnsDeclaration, Dependency
from .catalog import Catalog
from .ordered import Tests
from .views import Refused, Untranslatable, _Branch, _dnf, _Query, predicate_name, table_relations


def table_statements(catalog: Catalog, refused: list[Untranslatable] | None = None, tests: Tests | None = None) -> list:
    """Declarations and denials for every table of ``catalog`` (see the module's docstring).
    CHECKs that do not translate are appended to ``refused`` when given; comparisons of numbers,
    dates and booleans go to ``tests`` (:mod:`.ordered`)."""
    tests = tests if tests is not None else Tests()
    relations = table_relations(catalog)
    out: list = []
    for table in sorted(catalog.tables.values(), key=lambda t: t.name.lower()):
        pred = predicate_name(table.name)
        if pred is None:
            continue
        columns = tuple(c.name.lower() for c in table.columns)
        out.append(ColumnsDeclaration(pred, columns))
        for key in [table.primary_key, *table.unique]:
            if key:
                out.append(Dependency("key", pred, tuple(c.lower() for c in key)))
        for cols, target, target_cols in table.foreign_keys:
            if predicate_name(target or "") in relations:
                out.append(Dependency("fk", pred, tuple(c.lower() for c in cols), tuple(c.lower() for c in target_cols), predicate_name(target)))
        for j, column in enumerate(table.columns):
            if not column.nullable and column.kind != "text":
                args = tuple(Var(column.name.capitalize()) if i == j else Var("_") for i in range(len(columns)))
                out.append(Denial((Literal(Atom(pred, args)), Comparison("=", args[j], "")), f"not_null_{pred}__{columns[j]}"))
        for n, check in enumerate(table.checks, 1):
            try:
                out += _check_denials(catalog, relations, pred, check, f"check_{pred}_{n}", tests)
            except Refused as r:
                if refused is not None:
                    refused.append(Untranslatable(f"{table.name} (CHECK {check})", None, None, r.reason))
    return out


def _check_denials(catalog, relations, pred: str, check: str, name: str, tests: Tests) -> list[Denial]:
    import sqlglot

    try:
        condition = sqlglot.parse_one(check, read=catalog.dialect)
    except sqlglot.errors.ParseError:
        raise Refused(None, "sqlglot cannot parse it") from None
    rel = relations[pred]
    query = _Query(name, lambda *a: rel, catalog.dialect, True, Tests())
    variables = [query.var(c) for c in rel.columns]
    query.note_orders(variables, rel)
    scope = [(pred, rel, variables)]
    kinds = dict(zip(variables, rel.kinds))
    atom = Atom(pred, tuple(variables))
    out = []
    # A row violates the CHECK when its condition is false (NULL passes): the negation's disjuncts.
    for i, conjunction in enumerate(_dnf(sqlglot.exp.Not(this=condition), condition)):
        branch = _Branch([atom], [], {v for v, n in zip(variables, rel.nullable) if n})
        query.conjunction(conjunction, branch, [scope], kinds)
        if query.rules:
            raise Refused(condition, "a CHECK with a subquery is not translated")
        body, _ = query.finish(branch, [])
        out.append(Denial(tuple(body), name if i == 0 else f"{name}_{i + 1}"))
    tests.by_pred.update(query.tests.by_pred)
    return out


__all__ = ["table_statements"]
