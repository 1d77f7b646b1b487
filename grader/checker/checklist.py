"""The article's pre-launch checklist: its thirteen items, each pass, FAIL, or a question only the author can answer.

``checklist`` turns a ``Report`` into the thirteen items of *Common mistakes › Pre-launch checklist*;
each item names the rules that check it, and says what to look at when they could not run.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grader.checker.findings import CHECKLIST, MISTAKES, Finding, Report, cite

PASS, FAIL, ASK = "pass", "FAIL", "answer yourself"


@dataclass(frozen=True)
class Item:
    number: int
    text: str
    section: str  # the article's section the item comes from
    rules: tuple[str, ...]  # the rules that check it; () when only the author can answer
    question: str  # what to do or look at when check-server could not check the item
    residual: str = ""  # what check-server cannot see even when its checks pass


CHECKLIST_ITEMS: tuple[Item, ...] = (
    Item(
        1,
        "tools/list returns only the tools you publish on purpose.",
        "2.1 The framework published private tools on its own",
        ("whitelist",),
        "Give --expect with the tools you mean to publish, and run the check after every deploy.",
    ),
    Item(
        2,
        "initialize sent to the production address from outside returns JSON, not the proxy's HTML page.",
        "1.4 An HTML page instead of JSON: the proxy's bot protection",
        ("http.initialize", "http.fresh_reply"),
        "Run check-server --url against the production address, from a machine outside it.",
        "Was this the production address, checked from outside it?",
    ),
    Item(
        3,
        "Answers carry no Set-Cookie; the admin area and other closed sections stay closed.",
        "1.5 A 403 or a redirect to a login page: the framework's default security",
        ("http.no_cookie",),
        "Run check-server --url; then open the admin area without logging in: it must refuse.",
        "Is the admin area still closed? Open it without logging in: it must refuse (401/403 or a login page).",
    ),
    Item(
        4,
        "The connection is tested with the newest clients (Inspector, Claude Code, web clients).",
        '1.1 "Unrecognized field": client and server on different protocol versions',
        ("http.newer_client",),
        "Connect with today's MCP Inspector, Claude Code and a web client; did each list the tools?",
        "check-server played a newer client; connect with today's MCP Inspector, Claude Code and a web client too.",
    ),
    Item(
        5,
        "The rate limit counts the client's real IP, not the proxy's; over it the answer is 429 with Retry-After.",
        "3.1 The rate limit counts the proxy's IP instead of the client's",
        ("http.rate_limit", "http.client_identity"),
        "Run check-server --url with --burst N (N above the limit); through your proxy, add --behind-proxy.",
    ),
    Item(
        6,
        "There is an overall daily cap on spending.",
        "3.3 No daily safety cap",
        (),
        "Is there a counter of all requests per day, a spend cap at the embedding provider (best, a key of its own for MCP), "
        "budget alerts, and a choice of fail-open or fail-closed for when the limiter's store is down, made by the cost of one call?",
    ),
    Item(
        7,
        "Only published data goes out (a filter on status in the query itself).",
        "2.2 Drafts and deleted pages in the vector store",
        (),
        "Does the search query itself keep only published items whose publication date has come? Search for a draft's title: "
        'it must not come back (a --sample with "expect": "empty" checks it on every run).',
    ),
    Item(
        8,
        "Tools that only read are marked readOnlyHint.",
        "2.3 Tools without a read-only mark",
        ("annotations.read_only",),
        "Give --read-only with your read-only tools if their names do not start with get_, list_ or search_.",
        "A hint is a promise, not a protection: does every tool marked read-only really change nothing?",
    ),
    Item(
        9,
        "The relevance threshold is calibrated on the production embedding model.",
        "4.2 Local and production embeddings score differently: the threshold does not hold",
        (),
        "Which model produced the scores you chose the threshold from? Log the scores of a few queries of three kinds "
        "(on the site, a neighbouring topic, off the site) in production, and put the threshold between the last two.",
    ),
    Item(
        10,
        "Fragments are short, without cut words, at most 1-2 per source.",
        "4.4 Fragments start with a cut word",
        ("search.fragments",),
        'Give a --sample that calls the search tool with "expect": "ok"; check-server then reads its fragments.',
    ),
    Item(
        11,
        "Tools return statuses (ok / not_found / unavailable), not exceptions.",
        "5.1 Exceptions instead of statuses",
        ("result.expectation",),
        'Give --sample calls: one that matches nothing ("expect": "empty") and one that must fail ("expect": "error").',
        "What does the search tool answer when the embedding service is down? It should be an unavailable status, not an exception.",
    ),
    Item(
        12,
        "Tool descriptions answer what the data is, when to call and what to do with the result.",
        "5.2 Vague descriptions: the model does not call the tool",
        ("description.what_when_how",),
        "Read each description as the model would.",
        "Word matching is not a judge: ask a real client a question the tool answers, without naming the tool, and look in "
        "the server log for the call.",
    ),
    Item(
        13,
        "The logs show who connected, what query the model wrote and how long the call took.",
        '1.1 "Unrecognized field": client and server on different protocol versions',
        ("initialize.logged",),
        "Look in your server's log for this check's connection (client name, protocol version), its calls and their durations.",
        "Do your server's logs show each call's query (as the model wrote it) and how long it took?",
    ),
)


@dataclass(frozen=True)
class ChecklistLine:
    item: Item
    result: str  # PASS, FAIL or ASK
    evidence: str  # what check-server saw
    question: str  # what the author answers: the whole item (ASK), or what the checks cannot see

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item.number,
            "text": self.item.text,
            "source": cite(CHECKLIST, (MISTAKES, self.item.section)),
            "result": self.result,
            "evidence": self.evidence,
            "question": self.question,
        }


def checklist(report: Report) -> list[ChecklistLine]:
    """The thirteen items of *Common mistakes › Pre-launch checklist*: pass, FAIL or answer yourself.

    An item passes when every check of it ran and passed, fails when one failed, and is the
    author's to answer when none could run (a stdio server for the HTTP items, no --expect, no
    samples) or when no check exists (a spend cap, the threshold's calibration).
    """
    lines = []
    for item in CHECKLIST_ITEMS:
        found = [f for f in report.findings if f.rule in item.rules]
        checked = [f for f in found if f.passed is not None]
        failed = [f for f in checked if f.passed is False]
        if failed:
            result = FAIL
            evidence = " ".join(f"[{f.subject}] {f.message}" for f in failed[:2]) + (
                f" (and {len(failed) - 2} more)" if len(failed) > 2 else ""
            )
        elif checked:
            result, evidence = PASS, _passed(checked)
        else:
            result, evidence = ASK, " ".join(f.message for f in found) or _not_checked(item, report)
        lines.append(ChecklistLine(item, result, evidence, item.question if result == ASK else item.residual))
    return lines


def _passed(checked: Sequence[Finding]) -> str:
    """One finding as it is; several of a rule as "rule passed for a, b, c" (their messages say the same)."""
    if len(checked) == 1:
        return f"[{checked[0].subject}] {checked[0].message}"
    parts = []
    for rule in dict.fromkeys(f.rule for f in checked):
        of_rule = [f for f in checked if f.rule == rule]
        parts.append(
            f"[{of_rule[0].subject}] {of_rule[0].message}"
            if len(of_rule) == 1
            else f"{rule} passed for {', '.join(f.subject for f in of_rule)}."
        )
    return " ".join(parts)


def _not_checked(item: Item, report: Report) -> str:
    if item.number == 4 and report.url is None and report.protocol_version:
        return f"check-server connected with the newest client of its SDK; protocol {report.protocol_version} agreed."
    if any(rule.startswith("http.") for rule in item.rules) and report.url is None:
        return "Checked only over HTTP: this server was started over stdio."
    if item.rules and any(f.rule == "tools.list" and f.passed is False for f in report.findings):
        return "No MCP session could be opened (tools/list failed), so this was not checked."
    if not item.rules:
        return "Only the server's author can answer this one."
    return "Not checked in this run."


def checklist_table(lines: Sequence[ChecklistLine], server: str, width: int = 96) -> str:
    out = [f"Pre-launch checklist for {server} ({cite(CHECKLIST)})", ""]
    for line in lines:
        out.append(f"{line.item.number:>2}. [{line.result}] {line.item.text}")
        out.extend(textwrap.wrap(line.evidence, width, initial_indent="      seen: ", subsequent_indent="            "))
        if line.question:
            out.extend(
                textwrap.wrap(line.question, width, initial_indent="      you:  ", subsequent_indent="            ")
            )
    counts = {r: sum(1 for x in lines if x.result == r) for r in (PASS, FAIL, ASK)}
    out += ["", f"{counts[PASS]} pass, {counts[FAIL]} FAIL, {counts[ASK]} to answer yourself."]
    return "\n".join(out)
