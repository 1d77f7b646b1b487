"""lab4_server_integration: its visible checks (being written)."""

from labkit.checking import CheckRegistry

checks = CheckRegistry("lab4_server_integration")
