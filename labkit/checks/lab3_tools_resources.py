"""lab3_tools_resources: its visible checks (being written)."""

from labkit.checking import CheckRegistry

checks = CheckRegistry("lab3_tools_resources")
