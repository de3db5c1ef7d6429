"""The nablog language: AST, parser, printer, errors with locations, analysis (safety, strata)."""

from .analysis import Analysis, FdShape, analyze, check_arities, dependency_graph, empty_base_relations, fd_shape, stratify
from .ast import (
    Atom,
    BaseDeclaration,
    ColumnsDeclaration,
    Comparison,
    Constant,
    ConstrainedRule,
    Constraint,
    Denial,
    Dependency,
    DomainCall,
    Literal,
    NullDeclaration,
    Protection,
    Requirement,
    Rule,
    Statement,
    Term,
    TrustDeclaration,
    Var,
    constant_sort_key,
    format_constant,
    row_sort_key,
)
from .delta import Delta, shown_name
from .errors import AnalysisError, ConstraintError, DataError, Loc, NablogError, NablogSyntaxError, NablogWarning, QueryError, Source
from .parser import parse_atom, parse_statements, parse_term
from .program import SPLIT_PREFIX, Facts, Program, base_part, constraint_name, parse, parse_files, read_text, separate_facts

__all__ = [
    "ConstraintError",
    "SPLIT_PREFIX", "Analysis", "AnalysisError", "Atom", "BaseDeclaration", "ColumnsDeclaration", "Comparison", "Constant", "ConstrainedRule", "Constraint",
    "DataError", "Delta", "Denial", "Dependency", "DomainCall", "Facts", "FdShape", "Literal", "Loc", "NablogError", "NablogSyntaxError", "NablogWarning", "NullDeclaration", "Program", "Protection",
    "QueryError", "Requirement", "Rule", "Source", "Statement", "Term", "TrustDeclaration", "Var", "analyze", "base_part", "check_arities",
    "constant_sort_key", "constraint_name", "dependency_graph", "empty_base_relations", "fd_shape", "format_constant", "parse", "parse_atom", "parse_files",
    "parse_statements", "parse_term", "read_text", "row_sort_key", "separate_facts", "shown_name", "stratify",
]
