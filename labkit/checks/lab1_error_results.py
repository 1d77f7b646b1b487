"""lab1_error_results: its visible checks (being written)."""

from labkit.checking import CheckRegistry

checks = CheckRegistry("lab1_error_results")
