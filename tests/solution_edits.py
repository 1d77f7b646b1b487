"""Edit a lab's solution by its code, not by its layout: the text to replace is found token by token.

The tests and the sample submissions make wrong answers by replacing a piece of a solution. The solutions are
formatted (ruff format), so a piece written as one long line may sit in the notebook over several lines, with a
trailing comma or the other quote. When the text is not there as it is, ``find`` matches the tokens of the piece against the tokens of the code: it
ignores spaces, line breaks and indentation, a comma before a closing bracket, and which quote a string uses, and
nothing else (a comment, a name, a number or a string's text must be the same).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""
    (?P<string>(?:[rRbBuUfF]{1,2})?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*"))
    |(?P<comment>\#[^\n]*)
    |(?P<word>\w+)
    |(?P<op>\*\*=|//=|>>=|<<=|->|:=|==|!=|<=|>=|\*\*|//|<<|>>|[-+*/%&|^@]=|\.\.\.|[^\s\w])
    |(?P<space>\s+)
    """,
    re.VERBOSE,
)
CLOSERS = ")]}"


def _normal(kind: str, text: str) -> str:
    if kind == "string":
        prefix = re.match(r"[rRbBuUfF]*", text)[0]
        body = text[len(prefix) :]
        if body.startswith("'") and not body.startswith("'''") and '"' not in body[1:-1]:
            body = '"' + body[1:-1].replace("\\'", "'") + '"'
        return prefix.lower() + body
    if kind == "comment":
        return "#" + text[1:].strip()
    return text


def tokens(code: str) -> list[tuple[str, int, int]]:
    """(normalised text, start, end) of each token of ``code``, spaces left out."""
    found = []
    for match in _TOKEN.finditer(code):
        if match.lastgroup != "space":
            found.append((_normal(match.lastgroup, match[0]), match.start(), match.end()))
    return found


def _optional(toks: list[tuple[str, int, int]], i: int) -> bool:
    """A comma just before a closing bracket (the formatter's trailing comma) may be there or not."""
    return toks[i][0] == "," and i + 1 < len(toks) and toks[i + 1][0] in CLOSERS


def _match(piece: list, code: list, p: int, c: int) -> int | None:
    """The index in ``code`` just after ``piece[p:]`` matched from ``code[c]``, or None."""
    while p < len(piece):
        if c < len(code) and piece[p][0] == code[c][0]:
            p, c = p + 1, c + 1
        elif c < len(code) and _optional(code, c):
            c += 1
        elif _optional(piece, p):
            p += 1
        else:
            return None
    return c


def find(code: str, piece: str) -> list[tuple[int, int]]:
    """The (start, end) spans of ``code`` whose tokens are those of ``piece``."""
    wanted = tokens(piece)
    if not wanted:
        raise ValueError("the text to replace has no code in it")
    have = tokens(code)
    spans = []
    for c in range(len(have)):
        end = _match(wanted, have, 0, c)
        if end is not None:
            spans.append((have[c][1], have[end - 1][2]))
    return spans


def replace_once(code: str, old: str, new: str) -> str:
    """``code`` with the one occurrence of ``old`` replaced by ``new``: the text itself when it is there, else the
    one piece whose tokens are those of ``old`` (a piece that starts or ends inside a string is found as text only).

    Spaces around ``old`` (an indentation before it, a line break after it) are matched too when ``new`` does not
    start and end with the same: removing lines removes them whole.
    """
    if old in code:
        if code.count(old) != 1:
            raise ValueError(f"the text to replace must occur exactly once, not {code.count(old)} times: {old!r}")
        return code.replace(old, new)
    spans = find(code, old)
    if len(spans) != 1:
        raise ValueError(f"the text to replace must occur exactly once, not {len(spans)} times: {old!r}")
    ((start, end),) = spans
    lead = old[: len(old) - len(old.lstrip())]
    trail = old[len(old.rstrip()) :]
    if new.startswith(lead) and new.endswith(trail) and len(new) >= len(lead) + len(trail):
        return code[:start] + new[len(lead) : len(new) - len(trail)] + code[end:]
    if lead:
        start = len(code[:start].rstrip(" \t")) if "\n" not in lead else len(code[:start].rstrip())
    if trail:
        end = len(code) - len(code[end:].lstrip(" \t")) if "\n" not in trail else _after_line(code, end, trail)
    return code[:start] + new + code[end:]


def _after_line(code: str, end: int, trail: str) -> int:
    """The end of the spaces after ``end``, through as many line breaks as ``trail`` has."""
    breaks = trail.count("\n")
    while end < len(code) and code[end] in " \t\n" and breaks:
        if code[end] == "\n":
            breaks -= 1
        end += 1
    return end


def occurrences(code: str, old: str) -> int:
    """How many times ``replace_once`` finds ``old`` in ``code``."""
    return code.count(old) or len(find(code, old))
