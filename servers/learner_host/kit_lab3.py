"""What lab 3 hands the learner: an on-call team's runbooks and alerts, and the SDK pieces.

The store is plain data access; the learner decides what becomes a tool and what a
resource. For grading, the store reads its size from, and writes a journal of every
change to, the folder named by ``LAB_STATE_DIR`` (when set), so a check can verify from
outside that reading a resource changed nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from servers.learner_host.sdk import on_first_use

DEFAULT_SIZE = 12
SERVICES = ("checkout", "search", "auth", "billing", "notifications")
SEVERITIES = ("sev1", "sev2", "sev3")
ALERTS = ("ALERT-1", "ALERT-2", "ALERT-3", "ALERT-4", "ALERT-5")

# The scenario's addresses and names (part of the lab's specification).
CATALOG_URI = "runbooks://catalog"
RUNBOOK_TEMPLATE = "runbooks://runbooks/{runbook_id}"


def make_runbook(i: int) -> dict[str, Any]:
    service = SERVICES[(i * 3) % len(SERVICES)]
    return {
        "id": f"RB-{i}",
        "title": f"{service.capitalize()} outage playbook {i}",
        "service": service,
        "severity": SEVERITIES[i % len(SEVERITIES)],
        "steps": [
            f"Check the {service} dashboard for error spikes.",
            f"Roll back the last {service} deploy if it is under an hour old.",
            "Page the service owner if errors persist for 10 minutes.",
        ],
    }


class RunbookStore:
    """The runbooks (read-only) and the alerts' state (acknowledgements and notes)."""

    def __init__(self) -> None:
        self.alerts: dict[str, dict[str, Any]] = {a: {"acknowledged_by": None, "notes": []} for a in ALERTS}

    @staticmethod
    def _state_dir() -> Path | None:
        folder = os.environ.get("LAB_STATE_DIR")
        return Path(folder) if folder else None

    @property
    def runbooks(self) -> list[dict[str, Any]]:
        size = DEFAULT_SIZE
        folder = self._state_dir()
        if folder and (folder / "control.json").exists():
            size = json.loads((folder / "control.json").read_text())["size"]
        return [make_runbook(i) for i in range(1, size + 1)]

    def runbook(self, runbook_id: str) -> dict[str, Any] | None:
        return next((r for r in self.runbooks if r["id"] == runbook_id), None)

    def _journal(self, change: str, alert_id: str) -> None:
        folder = self._state_dir()
        if folder:
            with open(folder / "journal.jsonl", "a", encoding="utf-8") as journal:
                journal.write(json.dumps({"change": change, "alert": alert_id}) + "\n")

    def acknowledge(self, alert_id: str, by: str) -> bool:
        """Mark an alert acknowledged; False when it already was, by the same person (nothing changes)."""
        alert = self.alerts[alert_id]
        if alert["acknowledged_by"] == by:
            return False
        alert["acknowledged_by"] = by
        self._journal("acknowledge", alert_id)
        return True

    def add_note(self, alert_id: str, text: str) -> int:
        """Add a note to an alert's timeline; returns how many notes it has now."""
        self.alerts[alert_id]["notes"].append(text)
        self._journal("note", alert_id)
        return len(self.alerts[alert_id]["notes"])


STORE = RunbookStore()

__all__ = [
    "ALERTS",
    "CATALOG_URI",
    "RUNBOOK_TEMPLATE",
    "STORE",
    "CallToolResult",
    "MCPServer",
    "ResourceError",
    "TextContent",
    "ToolAnnotations",
]

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError
    from mcp_types import CallToolResult, TextContent, ToolAnnotations

# The SDK's pieces the learner builds with, imported on first use (servers.learner_host.sdk).
__getattr__ = on_first_use(
    globals(),
    {
        "MCPServer": "mcp.server.mcpserver",
        "ResourceError": "mcp.server.mcpserver.exceptions",
        "CallToolResult": "mcp_types",
        "TextContent": "mcp_types",
        "ToolAnnotations": "mcp_types",
    },
)
