"""Hyper tableaux, update tableaux, the minimality test and hitting sets."""
