"""A small notes server: add a note, list notes. Notes live in memory, or in ``NOTES_FILE`` (JSON) when set.

Every tool call is logged: which client called which tool with which arguments, what came back and how long
it took, on stderr and, when ``NOTES_CALL_LOG`` names a file, as one JSON line per call in that file. That
log is how to check a description does its job (*Common mistakes › 5.2 Vague descriptions: the model does
not call the tool*): ask a real client a question without naming the tool, then read whether the tool was
called and with what. ``NOTES_DESCRIPTIONS=vague`` serves the same tools with one-word descriptions, to
compare the two.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import mcp_types as types
from pydantic import BaseModel, Field

from grader.taxonomy import empty_result, success_result, validation_error
from servers.toolkit import ToolSpec, run_stdio
from servers.toolkit import build_server as build_mcp_server

log = logging.getLogger("servers.notes")

RICH = {
    "add_note": "Save a one-line personal note. Call it when the user asks you to remember something. "
    "Returns how many notes are saved.",
    "list_notes": "List the user's saved notes, optionally filtered by text. Call it when the user asks what they "
    "noted. Returns the notes; an empty list means no note matches.",
}
VAGUE = {"add_note": "Add.", "list_notes": "List."}


class AddNote(BaseModel):
    text: str = Field(description="The note, one line.")


class ListNotes(BaseModel):
    contains: str | None = Field(None, description="Only notes containing this text (case-insensitive).")


class Notes:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.items: list[str] = json.loads(path.read_text()) if path and path.exists() else []

    def add(self, text: str) -> dict:
        if not text.strip():
            return validation_error("A note needs some text.", field="text", reason="must not be empty")
        self.items.append(text.strip())
        if self.path:
            self.path.write_text(json.dumps(self.items))
        return success_result(f"Saved note #{len(self.items)}.", {"count": len(self.items)})

    def list(self, contains: str | None) -> dict:
        found = [n for n in self.items if contains is None or contains.lower() in n.lower()]
        if not found:
            return empty_result("No notes match.", key="notes")
        return success_result(f"{len(found)} note(s).", {"notes": found})


def field_of(data: Any, *names: str) -> Any:
    """The first of ``names`` that ``data`` (a dict or a pydantic model) has."""
    for name in names:
        value = data.get(name) if isinstance(data, Mapping) else getattr(data, name, None)
        if value is not None:
            return value
    return None


def client_of(params: Any) -> str:
    """Who is calling: the clientInfo of ``initialize``, or of the request's ``_meta`` (no handshake)."""
    meta = field_of(params, "_meta", "meta") or {}
    info = field_of(params, "clientInfo", "client_info") or (
        meta.get(types.CLIENT_INFO_META_KEY) if isinstance(meta, Mapping) else None
    )
    if info is None:
        return ""
    return f"{field_of(info, 'name') or '?'} {field_of(info, 'version') or ''}".strip()


def outcome_of(result: Any) -> tuple[str, int]:
    """("error" / "empty" / "ok", characters of text) of a tool result."""
    text = "".join(str(field_of(block, "text") or "") for block in field_of(result, "content") or [])
    if field_of(result, "isError", "is_error"):
        return "error", len(text)
    data = field_of(result, "structuredContent", "structured_content")
    empty = isinstance(data, Mapping) and any(isinstance(v, list) and not v for v in data.values())
    return ("empty" if empty else "ok"), len(text)


class CallLog:
    """Server middleware: one record per ``tools/call``, on stderr and in ``path`` (JSON lines) when given."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.client = ""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        method = getattr(ctx, "method", None)
        params = getattr(ctx, "params", None) or {}
        if method == "initialize":
            self.client = client_of(params) or self.client
        if method != "tools/call":
            return await call_next(ctx)
        started = time.perf_counter()
        result = await call_next(ctx)
        outcome, chars = outcome_of(result)
        record = {
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
            "client": client_of(params) or self.client or "(unknown)",
            "tool": field_of(params, "name"),
            "arguments": field_of(params, "arguments") or {},
            "outcome": outcome,
            "characters": chars,
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }
        log.info(
            "call %s(%s) from %s: %s, %d characters, %.1f ms",
            record["tool"],
            json.dumps(record["arguments"], ensure_ascii=False),
            record["client"],
            outcome,
            chars,
            record["ms"],
        )
        if self.path:
            try:
                with self.path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            except OSError as exc:  # a log that cannot be written must not cost the call its answer
                log.warning("call log %s not written: %s", self.path, exc)
        return result


def read_call_log(path: Path) -> list[dict[str, Any]]:
    """The calls ``NOTES_CALL_LOG`` recorded, oldest first (none when the file does not exist yet)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_server(notes: Notes | None = None, *, descriptions: str | None = None, call_log: Path | None = None):
    """The notes server; ``descriptions`` "vague" or "rich" and ``call_log`` default to NOTES_DESCRIPTIONS and NOTES_CALL_LOG."""
    if notes is None:
        file = os.environ.get("NOTES_FILE")
        notes = Notes(Path(file) if file else None)
    if descriptions is None:
        descriptions = os.environ.get("NOTES_DESCRIPTIONS", "rich")
    if call_log is None and os.environ.get("NOTES_CALL_LOG"):
        call_log = Path(os.environ["NOTES_CALL_LOG"])
    said = VAGUE if descriptions.strip().lower() == "vague" else RICH
    specs = [
        ToolSpec(
            "add_note",
            said["add_note"],
            AddNote,
            lambda a: notes.add(a.text),
            types.ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
            ),
        ),
        ToolSpec(
            "list_notes",
            said["list_notes"],
            ListNotes,
            lambda a: notes.list(a.contains),
            types.ToolAnnotations(
                read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
            ),
        ),
    ]
    server = build_mcp_server("notes", specs)
    server.middleware.append(CallLog(call_log))
    return server


def main() -> None:
    run_stdio(build_server())
