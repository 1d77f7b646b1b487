"""lab2_scopes_expansion: its visible checks (being written)."""

from labkit.checking import CheckRegistry

checks = CheckRegistry("lab2_scopes_expansion")
