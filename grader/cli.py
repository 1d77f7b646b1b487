"""Command-line entry points: decide, and the grading pipeline over nbgrader."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from grader.decisions import DEFAULT_MAX_ATTEMPTS, MalformedResult, decide


class UsageError(Exception):
    """A mistake the person at the keyboard can fix; its text says how."""


def cmd_decide(args: argparse.Namespace) -> int:
    source = sys.stdin if args.file == "-" else None
    where = "standard input" if source else args.file
    try:
        text = source.read() if source else Path(args.file).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"Cannot read {where}: {exc.strerror}. Give the path of a JSON file holding one CallToolResult.")
    try:
        result = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{where} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            "Give one CallToolResult in wire format, e.g. {\"isError\": true, \"content\": [...], \"structuredContent\": {...}}."
        )
    if args.attempt < 1 or args.max_attempts < 1 or args.attempt > args.max_attempts:
        raise UsageError("--attempt and --max-attempts count from 1, and --attempt may not exceed --max-attempts.")
    try:
        decision = decide(result, args.attempt, args.max_attempts)
    except MalformedResult as exc:
        raise UsageError(f"{where} does not hold a CallToolResult: {exc}.")
    print(json.dumps(decision.to_json(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("decide", help="Walk the retry/escalate decision tree for one CallToolResult (wire-format JSON).")
    p.add_argument("file", help="A JSON file holding one CallToolResult, or - for standard input.")
    p.add_argument("--attempt", type=int, default=1, help="Which attempt produced this result (from 1; default 1).")
    p.add_argument(
        "--max-attempts", type=int, default=DEFAULT_MAX_ATTEMPTS, help=f"The retry cap (default {DEFAULT_MAX_ATTEMPTS})."
    )
    p.set_defaults(run=cmd_decide)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
