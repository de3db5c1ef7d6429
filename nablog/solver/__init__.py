"""View updating: requests, goal-directed candidates, methods, verified minimal realizations."""

from .propose import CANDIDATE_POLICIES, METHODS, propose
from .realization import Proposal, Realization, Update, check_before_writing
from .request import Request, parse_request

__all__ = ["CANDIDATE_POLICIES", "METHODS", "Proposal", "Realization", "Request", "Update", "check_before_writing", "parse_request", "propose"]
