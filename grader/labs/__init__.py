"""The labs the grader knows, each a registry of named checks."""

from __future__ import annotations

import importlib

from labkit.checking import CheckRegistry

LAB_MODULES = {
    "lab1_error_results": "grader.labs.lab1_error_results",
    "lab2_scopes_expansion": "grader.labs.lab2_scopes_expansion",
    "lab3_tools_resources": "grader.labs.lab3_tools_resources",
    "lab4_server_integration": "grader.labs.lab4_server_integration",
}


class UnknownLab(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f"There is no lab named {name!r}. Known labs: {', '.join(sorted(LAB_MODULES))}.")


def lab_checks(name: str) -> CheckRegistry:
    if name not in LAB_MODULES:
        raise UnknownLab(name)
    return importlib.import_module(LAB_MODULES[name]).checks
