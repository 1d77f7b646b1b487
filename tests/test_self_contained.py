"""The course stands on its own: every file in the repository cites its sources by English title and section
heading (docs/sources.md), never by a copy's file name, a path outside the repository, a line number into a
source or a quotation in Russian or Ukrainian, and nothing reads a folder outside the checkout."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(REPO).as_posix()  # its own patterns and cases name what they catch

# What a citation must not be, each with what to write instead.
FORBIDDEN: list[tuple[str, re.Pattern[str]]] = [
    ("Cyrillic text (quote no Russian or Ukrainian; name the section in English)", re.compile(r"[\u0400-\u052f]")),
    ("a path outside the repository", re.compile(r"\.\./shared\b|\bshared/(?:seeds|reviews)\b|\bshared/STYLE")),
    (
        "a source copy's file name",
        re.compile(r"\b00[024]_[0-9a-f]{16}\b|\bseeds?\s*`?0?0[024]`?(?![\d_])", re.IGNORECASE),
    ),
    (
        "a source called a seed (name it: exam guide, Common mistakes, Claude Code docs)",
        re.compile(
            r"\bthe seeds?\b|\bseed's\b|(?<!\w)\(seed\b|\bseeds? (?:line|lines|l\.|§|section|statement|example|document)",
            re.IGNORECASE,
        ),
    ),
    ("a line number into a source (cite the section heading)", re.compile(r"\bl\.\s?\d{2,4}\b|\b00[024]:\d+\b")),
    (
        "a line range into a source (cite the section heading)",
        re.compile(
            r"(?:exam guide|article|reference|docs|source)[^.\n]{0,30}\blines? \d+(?:\s*[-–]\s*\d+)?", re.IGNORECASE
        ),
    ),
]


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    files = []
    for name in listed:
        if not name:
            continue
        path = REPO / name.decode()
        if path.is_symlink() or not path.is_file() or name.decode() == THIS:
            continue
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue  # binary
        files.append(path)
    return files


def offences(text: str) -> list[tuple[int, str, str]]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN:
            match = pattern.search(line)
            if match:
                found.append((number, what, match.group(0)))
    return found


def test_the_repository_is_tracked_by_git():
    assert len(tracked_text_files()) > 50


@pytest.mark.parametrize(
    "line",
    [
        "the exam guide (seed `000`, section 2.2)",
        "Claude Code MCP reference, seed 004 l. 778–840",
        "see " + "shared" + "/" + "seeds/" + "000_" + "99b6002e9d2fa51e.txt",  # built, so this file cites nothing
        "the seed's $750 refund example",
        "exam guide, lines 36-43",
        "\u00ab\u0422\u0430\u043a\u0441\u043e\u043d\u043e\u043c\u0438\u044f\u00bb",  # Cyrillic, written as escapes
        "\u0422\u0438\u043f\u043e\u0432\u0456",
        "(000:153)",
    ],
)
def test_each_kind_of_bad_citation_is_caught(line):
    assert offences(line), line


@pytest.mark.parametrize(
    "line",
    [
        "*Exam guide › Error category taxonomy*",
        "*Claude Code docs, MCP › Environment variable expansion in `.mcp.json`*",
        "*Common mistakes › 3.1 The rate limit counts the proxy's IP instead of the client's*",
        "rng = random.Random(seed)  # a fixed seed",
        "covering(seed, dimensions)",
        'open_desk(DESK_SEED="42")',
        "café, 日本語, Ελληνικά",
        "the notebook's first 40 lines",
    ],
)
def test_ordinary_text_is_not_caught(line):
    assert not offences(line), offences(line)


def test_no_file_cites_a_source_by_file_path_or_line_or_quotes_it_in_russian_or_ukrainian():
    problems = []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, what, match in offences(text):
            problems.append(f"{path.relative_to(REPO)}:{number}: {what}: {match!r}")
    assert not problems, f"{len(problems)} citations to fix:\n" + "\n".join(problems[:200])
