"""What a tool's description must say to get the tool called, found by plain word matching (*Common mistakes ›
5.2 Vague descriptions: the model does not call the tool*): when to call it, what it returns, and a description
for every parameter. Lab 4's visible checks and the grader's server check read descriptions the same way.

Word matching is a lint: it catches a description that forgot to say when or what, and a description that says
the words and nothing else passes it. The proof is a real client asked without naming the tool, and the
server's log of what it called (lesson 05, section 3)."""

from __future__ import annotations

import re
from typing import Any

WHEN_CLAUSES = (
    r"\b(call|use|invoke|try) (it|this|this tool|me)\b[^.;]{0,30}?\b(when|whenever|if|before|after|to|for|only)\b",
    r"\bwhen(ever)? (the|a|an|you|your|someone|users?|customers?)\b",
    r"\b(if|once) (the|a) (user|customer)\b",
    r"\binstead of\b",
    r"\bbefore (calling|a|an|you|any)\b",
)
RESULT_HINTS = (r"\breturns?\b", r"\bresults?\b", r"\bempty (list|result|array)\b", r"\bnext ?page\b", r"\bmeans\b")


def first_match(patterns: tuple[str, ...], lowered: str) -> str | None:
    """The text the first of ``patterns`` that matches finds in ``lowered`` (None: none does)."""
    return next((m.group(0) for p in patterns if (m := re.search(p, lowered))), None)


def undescribed_parameters(tool: dict[str, Any]) -> list[str]:
    """The tool's parameters whose schema gives no description."""
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    return [p for p, s in properties.items() if not (isinstance(s, dict) and str(s.get("description", "")).strip())]
