"""The SDK's pieces a lab kit hands the learner, imported on first use.

The host hands a kit's names to the answer cells, and a notebook imports them from the kit; the grader reads the
same kits for their scenario constants alone, without the MCP SDK (half a second of imports). A kit sets its
module's ``__getattr__`` to ``on_first_use(globals(), {name: module})``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def on_first_use(namespace: dict[str, Any], where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each name of ``where`` from its module when first asked, and keeps it."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(where[name]), name)
        return value

    return __getattr__
