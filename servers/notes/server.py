"""A small notes server: add a note, list notes. Notes live in memory, or in ``NOTES_FILE`` (JSON) when set."""

from __future__ import annotations

import json
import os
from pathlib import Path

import mcp_types as types
from pydantic import BaseModel, Field

from grader.taxonomy import empty_result, success_result, validation_error
from servers.toolkit import ToolSpec, build_server as build_mcp_server, run_stdio


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


def build_server(notes: Notes | None = None):
    if notes is None:
        file = os.environ.get("NOTES_FILE")
        notes = Notes(Path(file) if file else None)
    specs = [
        ToolSpec(
            "add_note",
            "Save a one-line personal note. Call it when the user asks you to remember something. Returns how many notes are saved.",
            AddNote,
            lambda a: notes.add(a.text),
            types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False),
        ),
        ToolSpec(
            "list_notes",
            "List the user's saved notes, optionally filtered by text. Call it when the user asks what they noted. Returns the notes; an empty list means no note matches.",
            ListNotes,
            lambda a: notes.list(a.contains),
            types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        ),
    ]
    return build_mcp_server("notes", specs)


def main() -> None:
    run_stdio(build_server())
