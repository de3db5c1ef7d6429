"""View updating: requests, goal-directed candidates, methods, verified minimal realizations."""

from .options import CANDIDATE_POLICIES, METHODS, ProposeOptions
from .propose import ProposalHandle, propose
from .realization import Proposal, Realization, check_before_writing
from .request import Request, parse_request

__all__ = ["CANDIDATE_POLICIES", "METHODS", "Proposal", "ProposalHandle", "ProposeOptions", "Realization", "Request", "check_before_writing", "parse_request", "propose"]
