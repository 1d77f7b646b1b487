"""The rules on a tool's description: the length limits, keywords first, and what / when / how.

- ``description.upfront_limit``, ``description.deferred_limit``: 4,096 and 16,384 characters.
- ``description.keywords_first`` and ``description.what_when_how`` (advice, a heuristic).

The description heuristic (``description.what_when_how``) looks for the four things
*Common mistakes › 5.2 Vague descriptions: the model does not call the tool* puts in a
description, with plain word matching; it cannot tell a good description from a bad one that
uses the right words, so its findings are advice and say what they looked for:

- what data: a noun from the tool's name (``search_orders`` -> "order") appears in the text;
- when to call: a when-clause such as "call it when", "use it when/before", "when the user",
  "if the user", "instead of";
- what to do with the result: "returns", "result", "an empty list means", "next page",
  "means";
- how to phrase the input: every top-level input property has a description.

``description.keywords_first`` passes when a noun of the tool's name (or, for a name without
one, any word of it) appears in the first 100 characters, because tool search matches only the
start of a description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from grader.checker.findings import Finding, finding
from grader.checker.limits import DEFERRED_DESCRIPTION_LIMIT, UPFRONT_DESCRIPTION_LIMIT
from labkit.descriptions import (
    RESULT_HINTS,
    WHEN_CLAUSES,
    first_match,
    undescribed_parameters,
)

KEYWORD_WINDOW = 100  # the "start of a description" the keywords should be in (a heuristic, not a Claude Code limit)
GENERIC_VERBS = frozenset(
    [
        "get",
        "list",
        "search",
        "find",
        "set",
        "create",
        "update",
        "delete",
        "add",
        "remove",
        "fetch",
        "read",
        "write",
        "run",
        "do",
        "make",
        "new",
        "query",
        "lookup",
    ]
)


def words(name: str) -> list[str]:
    parts = re.split(r"[_\-.\s/]+|(?<=[a-z0-9])(?=[A-Z])", name)
    return [p.lower() for p in parts if p]


def singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def name_nouns(name: str) -> list[str]:
    """The words of a tool name that name its data: ``search_orders`` -> ["order"]."""
    all_words = [singular(w) for w in words(name) if len(w) >= 3]
    nouns = [w for w in all_words if w not in GENERIC_VERBS]
    return nouns or all_words


def mentioned(terms: Iterable[str], text: str) -> list[str]:
    found = {singular(w) for w in re.findall(r"[^\W_]+", text.lower())}
    return [t for t in terms if t in found]


def check_description(tool: dict[str, Any]) -> list[Finding]:
    name = tool["name"]
    text = tool.get("description") or ""
    size = len(text)
    found = [
        finding(
            "description.upfront_limit",
            name,
            size <= UPFRONT_DESCRIPTION_LIMIT,
            f"{size} characters, within the {UPFRONT_DESCRIPTION_LIMIT:,} a tool loaded up front keeps (and the part tool search matches)."
            if size <= UPFRONT_DESCRIPTION_LIMIT
            else f"{size} characters: Claude Code cuts a description loaded up front at {UPFRONT_DESCRIPTION_LIMIT:,} characters, "
            "and tool search matches only that much. Shorten it and put the critical details first.",
        ),
        finding(
            "description.deferred_limit",
            name,
            size <= DEFERRED_DESCRIPTION_LIMIT,
            f"{size} characters, within the {DEFERRED_DESCRIPTION_LIMIT:,} a tool loaded through tool search keeps."
            if size <= DEFERRED_DESCRIPTION_LIMIT
            else f"{size} characters: even loaded through tool search the description is cut at {DEFERRED_DESCRIPTION_LIMIT:,} characters.",
        ),
    ]
    nouns = name_nouns(name)
    head = text[:KEYWORD_WINDOW]
    early = mentioned(nouns, head)
    if early:
        found.append(
            finding(
                "description.keywords_first",
                name,
                True,
                f"The first {KEYWORD_WINDOW} characters name {', '.join(early)!s}.",
            )
        )
    else:
        found.append(
            finding(
                "description.keywords_first",
                name,
                False,
                f"None of the name's words ({', '.join(nouns) or 'none'}) appears in the first {KEYWORD_WINDOW} characters; "
                "tool search matches the start of a description, so open with the tool's data and action. "
                "(Heuristic: plain word matching.)",
            )
        )
    found.append(what_when_how(tool, nouns))
    return found


def what_when_how(tool: dict[str, Any], nouns: Sequence[str]) -> Finding:
    """The *Common mistakes › 5.2* heuristic; see this module's docstring for what it looks for."""
    name = tool["name"]
    text = tool.get("description") or ""
    lowered = text.lower()
    data = mentioned(nouns, text)
    when, result = first_match(WHEN_CLAUSES, lowered), first_match(RESULT_HINTS, lowered)
    undescribed = undescribed_parameters(tool)
    checks = [
        (
            "what data",
            bool(data),
            f"mentions {', '.join(data)}" if data else f"no noun of the name ({', '.join(nouns)})",
        ),
        (
            "when to call",
            when is not None,
            f'"{when}"' if when else 'no when-clause ("call it when...", "use it when...", "when the user...")',
        ),
        (
            "what to do with the result",
            result is not None,
            f'"{result}"' if result else 'no word on the result ("returns...", "an empty list means...", "next page")',
        ),
        (
            "how to phrase the input",
            not undescribed,
            "every parameter described" if not undescribed else f"no description for {', '.join(undescribed)}",
        ),
    ]
    summary = "; ".join(f"{label} {'✓' if ok else '✗'} ({why})" for label, ok, why in checks)
    passed = all(ok for _, ok, _ in checks)
    tail = (
        " Heuristic word matching, not a judge: read the description as the model would."
        if passed
        else " A description that says what data, when to call, how to ask and what to do with the result keeps the model "
        "from answering from memory or falling back to built-ins like Grep. Heuristic word matching, not a judge."
    )
    return finding("description.what_when_how", name, passed, summary + "." + tail)
