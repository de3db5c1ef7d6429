"""View updating: requests, candidates, methods, realizations, verification."""
