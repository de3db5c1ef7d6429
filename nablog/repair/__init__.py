"""Repair: constraint checking, violations, correction tables, simplified checks, batch repair."""

from .cells import CellCorrection, CellRepair, repair_cells
from .constraints import ConstraintInfo, FdShape, constraint_infos, consistently_signed, fd_shape
from .tables import POLICIES, CorrectionTable, Policy, RepairResult, decompose, parse_policy, repair
from .violations import ConstraintViolations, Falsifier, Falsifiers, FdConflict, find_falsifiers

__all__ = [
    "POLICIES", "CellCorrection", "CellRepair", "ConstraintInfo", "ConstraintViolations", "CorrectionTable", "Falsifier", "Falsifiers", "FdConflict",
    "FdShape", "Policy", "RepairResult", "constraint_infos", "consistently_signed", "decompose", "fd_shape",
    "find_falsifiers", "parse_policy", "repair", "repair_cells",
]
