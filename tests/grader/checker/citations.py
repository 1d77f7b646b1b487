"""The section headings ``docs/sources.md`` lists, to hold the checker's citations against."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

SOURCES_MD = Path(__file__).resolve().parents[3] / "docs" / "sources.md"


@cache
def listed_sections() -> frozenset[tuple[str, str]]:
    """(short name, section heading) for every row of the sources' tables."""
    short, listed = None, set()
    for line in SOURCES_MD.read_text(encoding="utf-8").splitlines():
        named = re.match(r"Short name: \*\*(.+?)\*\*", line)
        if named:
            short = named.group(1)
        elif line.startswith("## "):
            short = None
        elif short and line.startswith("| ") and not line.startswith(("| Section heading", "| ---")):
            listed.add((short, line.split("|")[1].strip()))
    return frozenset(listed)


def unlisted(citation: str) -> list[str]:
    """The places of ``citation`` ("short › heading; ...") that docs/sources.md does not list."""
    places = [place.split(" › ", 1) for place in citation.split("; ")]
    return [" › ".join(place) for place in places if tuple(place) not in listed_sections()]
