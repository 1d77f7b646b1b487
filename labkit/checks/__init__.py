"""Each lab's visible checks: the ones ``lab.check`` runs in the learner's notebook.

A module per lab, each with a ``checks`` registry (``labkit.checking.CheckRegistry``). They use fixed cases
with the expected answers written out, never a reference implementation, so that shipping them gives no
answer key away; the grader adds each lab's hidden checks (``grader.labs``).
"""

from __future__ import annotations

import importlib

from labkit.checking import CheckRegistry

VISIBLE_MODULES = {
    "lab1_error_results": "labkit.checks.lab1_error_results",
    "lab2_scopes_expansion": "labkit.checks.lab2_scopes_expansion",
    "lab3_tools_resources": "labkit.checks.lab3_tools_resources",
    "lab4_server_integration": "labkit.checks.lab4_server_integration",
}


class UnknownLab(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f"There is no lab named {name!r}. Known labs: {', '.join(sorted(VISIBLE_MODULES))}.")


def visible_checks(lab: str) -> CheckRegistry:
    if lab not in VISIBLE_MODULES:
        raise UnknownLab(lab)
    return importlib.import_module(VISIBLE_MODULES[lab]).checks
