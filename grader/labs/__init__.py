"""The labs the grader knows, each a registry of named checks: the visible ones learners have (``labkit.checks``)
and the hidden ones only the grader holds, in the notebook's order."""

from __future__ import annotations

import importlib

from labkit.checking import CheckRegistry
from labkit.checks import UnknownLab

__all__ = ["LAB_MODULES", "UnknownLab", "lab_checks"]

LAB_MODULES = {
    "lab1_error_results": "grader.labs.lab1_error_results",
    "lab2_scopes_expansion": "grader.labs.lab2_scopes_expansion",
    "lab3_tools_resources": "grader.labs.lab3_tools_resources",
    "lab4_server_integration": "grader.labs.lab4_server_integration",
}


def lab_checks(name: str) -> CheckRegistry:
    if name not in LAB_MODULES:
        raise UnknownLab(name)
    return importlib.import_module(LAB_MODULES[name]).checks
