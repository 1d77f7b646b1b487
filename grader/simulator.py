"""A deterministic, LLM-free agent that answers fixed questions two ways and counts what each way costs.

Source: *Exam guide › MCP tools vs MCP resources* (its examples: a ticket catalog, schema introspection):
a content catalog exposed as a resource spares the agent the exploratory N+1 sequence
(``list_issues``, then ``get_issue`` for each key). The simulator makes that claim
measurable against any server a :class:`Scenario` describes: the course's tracker, or a
learner's server with another catalog.

Two strategies answer each question, each as a fresh agent with no memory of the others:

- ``exploratory``: page through the list tool until ``nextPage`` is None, then call the
  get tool for each key in order until the question is answered (a count needs them all);
- ``catalog_first``: read the catalog resource once and answer from it; when the question
  needs a field the catalog lacks, fetch just the one item (its URI template, or the get
  tool when there is no template).

Every request goes through a :class:`CountingSession`, so the tally is of requests
actually sent. **Context bytes** is the size of everything the agent reads back, in UTF-8
bytes, summed over every response:

- a tool result: the ``text`` of each content block of type ``"text"`` (other block types
  count 0), plus ``structuredContent`` serialised as
  ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` when the result has one;
- a resource read: the text returned (the first content block's text, as ``Session.read``
  gives it);
- a listing (``tools/list``, ``resources/list``, ...): the listed entries serialised compactly
  as above (neither strategy lists anything; the proxy counts listings if a caller does);
- a request that fails with a protocol error: the error's message, ``str(exc)``.

Round trips are every request sent: tool calls + resource reads + listings.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

EXPLORATORY = "exploratory"
CATALOG_FIRST = "catalog_first"
STRATEGIES = (EXPLORATORY, CATALOG_FIRST)
DEFAULT_SIZES = (10, 50, 100, 250, 500, 1000)
MAX_PAGES = 10_000  # a list tool whose nextPage never ends is a server bug, not a long sprint


class SimulatorError(Exception):
    """The simulator could not answer: the server or the scenario does not allow it."""


class StrategyUnavailable(SimulatorError):
    """The scenario lacks what a strategy needs (a list tool, a get tool or a template)."""


# --- what is read, in bytes ---------------------------------------------------------------


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def text_bytes(text: str) -> int:
    """The size of a text the agent reads, in UTF-8 bytes."""
    return len(text.encode("utf-8"))


def tool_result_bytes(result: Mapping[str, Any]) -> int:
    """Context bytes of one tool result (wire format): its text blocks plus its compact structuredContent."""
    size = sum(
        text_bytes(block.get("text", ""))
        for block in result.get("content") or []
        if isinstance(block, Mapping) and block.get("type") == "text"
    )
    if result.get("structuredContent") is not None:
        size += text_bytes(compact_json(result["structuredContent"]))
    return size


# --- the counting proxy ---------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """What answering cost: requests sent, by kind, and the bytes the agent read."""

    tool_calls: int = 0
    resource_reads: int = 0
    listings: int = 0
    round_trips: int = 0
    context_bytes: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(**{name: getattr(self, name) + getattr(other, name) for name in self.__dataclass_fields__})


@dataclass(frozen=True)
class Request:
    """One request the agent sent: its kind (tool, resource, listing), target, arguments and cost."""

    kind: str
    target: str
    arguments: Mapping[str, Any] | None
    context_bytes: int
    error: str | None = None  # a protocol error's message; an isError tool result is not one


class CountingSession:
    """Wraps a ``servers.client.Session`` (or anything with the same methods) and counts every request.

    A request counts when it is sent, whatever comes back: an ``isError`` result, or a
    protocol error (which is re-raised after it is counted).
    """

    def __init__(self, session: Any) -> None:
        self.session = session
        self.requests: list[Request] = []

    def _send(
        self,
        kind: str,
        target: str,
        arguments: Mapping[str, Any] | None,
        send: Callable[[], Any],
        size: Callable[[Any], int],
    ) -> Any:
        try:
            response = send()
        except Exception as exc:
            self.requests.append(Request(kind, target, arguments, text_bytes(str(exc)), error=str(exc)))
            raise
        self.requests.append(Request(kind, target, arguments, size(response)))
        return response

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None, /, **kwargs: Any) -> dict[str, Any]:
        args = {**(arguments or {}), **kwargs}
        return self._send("tool", tool, args, lambda: self.session.call(tool, args), tool_result_bytes)

    def read(self, uri: str) -> str:
        return self._send("resource", uri, None, lambda: self.session.read(uri), text_bytes)

    def _listing(self, name: str) -> list[dict[str, Any]]:
        return self._send(
            "listing", name, None, getattr(self.session, name), lambda entries: text_bytes(compact_json(entries))
        )

    def tools(self) -> list[dict[str, Any]]:
        return self._listing("tools")

    def resources(self) -> list[dict[str, Any]]:
        return self._listing("resources")

    def templates(self) -> list[dict[str, Any]]:
        return self._listing("templates")

    def prompts(self) -> list[dict[str, Any]]:
        return self._listing("prompts")

    @property
    def tally(self) -> Tally:
        kinds = [r.kind for r in self.requests]
        return Tally(
            tool_calls=kinds.count("tool"),
            resource_reads=kinds.count("resource"),
            listings=kinds.count("listing"),
            round_trips=len(kinds),
            context_bytes=sum(r.context_bytes for r in self.requests),
        )


# --- the server, described generically ------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """Where a server keeps its catalog and its items, and which fields the questions ask about.

    ``list_tool=None``: the server only offers the catalog, so ``exploratory`` is unavailable.
    ``item_template`` has exactly one ``{placeholder}``, filled with the item's id verbatim.
    ``get_field=None``: the get tool's whole ``structuredContent`` is the item.
    """

    name: str
    catalog_uri: str
    items_key: str
    id_field: str
    title_field: str
    count_field: str  # question 1 counts items sharing the first item's value of this field
    lookup_field: str  # questions 2 and 4 ask for this field (present in the catalog)
    detail_field: str  # question 3 asks for this field (absent from the catalog)
    list_tool: str | None = None
    list_keys_field: str = "keys"
    page_arg: str = "page"
    next_page_field: str = "nextPage"
    first_page: int = 1
    get_tool: str | None = None
    get_arg: str | None = None
    get_field: str | None = None
    item_template: str | None = None
    item_noun: str = "item"

    def __post_init__(self) -> None:
        if self.item_template is not None and len(re.findall(r"\{\w+\}", self.item_template)) != 1:
            raise SimulatorError(
                f"The item template {self.item_template!r} must hold exactly one {{placeholder}} for the item's id."
            )
        if self.get_tool is not None and self.get_arg is None:
            raise SimulatorError(f"The get tool {self.get_tool!r} needs get_arg, the name of its id argument.")

    def item_uri(self, item_id: str) -> str:
        assert self.item_template is not None
        return re.sub(r"\{\w+\}", lambda _: item_id, self.item_template)


def _tracker_scenario() -> Scenario:
    from servers.tracker.tracker import CATALOG_URI, ISSUE_TEMPLATE

    return Scenario(
        name="tracker",
        catalog_uri=CATALOG_URI,
        items_key="issues",
        id_field="key",
        title_field="title",
        count_field="status",
        lookup_field="assignee",
        detail_field="description",
        list_tool="list_issues",
        list_keys_field="keys",
        page_arg="page",
        next_page_field="nextPage",
        get_tool="get_issue",
        get_arg="key",
        get_field="issue",
        item_template=ISSUE_TEMPLATE,
        item_noun="issue",
    )


TRACKER = _tracker_scenario()


# --- the questions --------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """A question about a catalog's items, with its reference answer.

    ``count``: how many items have ``where_field == where_value``.
    ``lookup``: ``field`` of the first item with ``where_field == where_value``, None when no item has it.
    """

    id: str
    text: str
    kind: str  # "count" or "lookup"
    where_field: str
    where_value: Any
    field: str | None
    expected: Any

    def matches(self, item: Mapping[str, Any]) -> bool:
        return self.where_field in item and item[self.where_field] == self.where_value

    def needs(self) -> tuple[str, ...]:
        """The fields an item must show for this question to be answered from it."""
        return (self.where_field,) if self.field is None else (self.where_field, self.field)

    def answer(self, items: Iterable[Mapping[str, Any]]) -> Any:
        """The answer from these items (the reference answer when they are all the items, in full)."""
        if self.kind == "count":
            return sum(1 for item in items if self.matches(item))
        return next((item.get(self.field) for item in items if self.matches(item)), None)


def questions_for(scenario: Scenario, items: Sequence[Mapping[str, Any]]) -> list[Question]:
    """The four fixed questions about a catalog, from its items in full (every field, catalog order).

    1. ``count``: how many items share the first item's ``count_field``;
    2. ``lookup_middle``: ``lookup_field`` of the item titled like the middle item (index n // 2);
    3. ``detail_last``: ``detail_field`` of the item titled like the last item (needs one fetch);
    4. ``no_such_title``: ``lookup_field`` of a title no item has (reference answer None).

    With no items the picked values are None, so every reference answer is 0 or None.
    """
    sc, noun = scenario, scenario.item_noun
    first, middle, last = (items[0], items[len(items) // 2], items[-1]) if items else ({}, {}, {})
    titles = {item.get(sc.title_field) for item in items}
    missing = f"No {noun} has this title"
    while missing in titles:
        missing += "!"

    def count(value: Any) -> Question:
        q = Question(
            "count",
            f"How many {sc.items_key} have {sc.count_field} {value!r}?",
            "count",
            sc.count_field,
            value,
            None,
            None,
        )
        return _with_expected(q, items)

    def lookup(qid: str, wanted: str, title: Any) -> Question:
        q = Question(
            qid,
            f"What is the {wanted!r} of the {noun} titled {title!r}?",
            "lookup",
            sc.title_field,
            title,
            wanted,
            None,
        )
        return _with_expected(q, items)

    return [
        count(first.get(sc.count_field)),
        lookup("lookup_middle", sc.lookup_field, middle.get(sc.title_field)),
        lookup("detail_last", sc.detail_field, last.get(sc.title_field)),
        lookup("no_such_title", sc.lookup_field, missing),
    ]


def _with_expected(question: Question, items: Sequence[Mapping[str, Any]]) -> Question:
    return Question(**{**asdict(question), "expected": question.answer(items)})


def reference_items(session: Any, scenario: Scenario) -> list[dict[str, Any]]:
    """Every item of a server's catalog in full, for ``questions_for``: the grader's set-up, not counted.

    Reads the catalog, then each item by its template (or the get tool). For the course's
    tracker prefer ``Tracker.issues``, which does not go through the server at all.
    """
    return [_fetch(session, scenario, entry[scenario.id_field]) for entry in _read_catalog(session, scenario)]


# --- the strategies -------------------------------------------------------------------------


def _result_text(result: Mapping[str, Any]) -> str:
    return " ".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, Mapping)).strip()


def _list_keys(proxy: CountingSession, sc: Scenario) -> list[Any]:
    keys: list[Any] = []
    page, seen = sc.first_page, set()
    while True:
        seen.add(page)
        result = proxy.call(sc.list_tool, {sc.page_arg: page})
        if result.get("isError"):
            raise SimulatorError(f"{sc.list_tool}({sc.page_arg}={page}) returned an error: {_result_text(result)!r}.")
        data = result.get("structuredContent") or {}
        page_keys = data.get(sc.list_keys_field)
        if not isinstance(page_keys, list):
            raise SimulatorError(
                f"{sc.list_tool}({sc.page_arg}={page}) has no {sc.list_keys_field!r} list in its structuredContent; "
                "set the Scenario's list_keys_field to the field that holds the keys."
            )
        keys.extend(page_keys)
        following = data.get(sc.next_page_field)  # absent or None: the last page
        if following is None:
            return keys
        if following in seen or len(seen) >= MAX_PAGES:
            raise SimulatorError(
                f"{sc.list_tool} never reaches a last page ({sc.next_page_field}={following!r} after page {page})."
            )
        page = following


def _get(proxy: Any, sc: Scenario, key: Any) -> dict[str, Any]:
    result = proxy.call(sc.get_tool, {sc.get_arg: key})
    if result.get("isError"):
        raise SimulatorError(f"{sc.get_tool}({sc.get_arg}={key!r}) returned an error: {_result_text(result)!r}.")
    data = result.get("structuredContent") or {}
    item = data.get(sc.get_field) if sc.get_field else data
    if not isinstance(item, dict):
        raise SimulatorError(
            f"{sc.get_tool}({sc.get_arg}={key!r}) has no {sc.get_field!r} object in its structuredContent."
        )
    return item


def _read_json(proxy: Any, uri: str) -> Any:
    try:
        text = proxy.read(uri)
    except Exception as exc:
        raise SimulatorError(f"Reading {uri} failed: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise SimulatorError(f"{uri} is not JSON: {text[:80]!r}") from None


def _read_catalog(proxy: Any, sc: Scenario) -> list[dict[str, Any]]:
    catalog = _read_json(proxy, sc.catalog_uri)
    entries = catalog.get(sc.items_key) if isinstance(catalog, dict) else None
    if not isinstance(entries, list):
        raise SimulatorError(f"The catalog {sc.catalog_uri} must be a JSON object with a {sc.items_key!r} list.")
    return entries


def _fetch(proxy: Any, sc: Scenario, item_id: Any) -> dict[str, Any]:
    """One item in full: by its URI template when there is one, else by the get tool."""
    if sc.item_template is not None:
        item = _read_json(proxy, sc.item_uri(str(item_id)))
        if not isinstance(item, dict):
            raise SimulatorError(f"{sc.item_uri(str(item_id))} must be a JSON object.")
        return item
    if sc.get_tool is not None:
        return _get(proxy, sc, item_id)
    raise StrategyUnavailable(
        f"The {sc.name} catalog lacks a field the question needs, and the scenario has neither an item_template "
        "nor a get_tool to fetch one item in full; give it one of them."
    )


def exploratory(proxy: CountingSession, sc: Scenario, question: Question) -> Any:
    """List every key, page by page, then get each item in order until the question is answered."""
    gathered: list[dict[str, Any]] = []
    for key in _list_keys(proxy, sc):
        item = _get(proxy, sc, key)
        gathered.append(item)
        if question.kind == "lookup" and question.matches(item):
            break
    return question.answer(gathered)


def catalog_first(proxy: CountingSession, sc: Scenario, question: Question) -> Any:
    """Read the catalog once; fetch single items only for a field the catalog lacks."""
    entries = _read_catalog(proxy, sc)
    if question.kind == "lookup" and all(question.where_field in e for e in entries):
        match = next((e for e in entries if question.matches(e)), None)
        if match is None or question.field in match:
            return question.answer([] if match is None else [match])
        return question.answer([_fetch(proxy, sc, match[sc.id_field])])
    if all(f in e for e in entries for f in question.needs()):
        return question.answer(entries)
    # The catalog cannot narrow the search: fetch items in order, as few as the question allows.
    gathered = []
    for entry in entries:
        item = _fetch(proxy, sc, entry[sc.id_field])
        gathered.append(item)
        if question.kind == "lookup" and question.matches(item):
            break
    return question.answer(gathered)


STRATEGY_FUNCTIONS: dict[str, Callable[[CountingSession, Scenario, Question], Any]] = {
    EXPLORATORY: exploratory,
    CATALOG_FIRST: catalog_first,
}


def check_available(scenario: Scenario, strategy: str) -> None:
    """Raise :class:`StrategyUnavailable` (or :class:`SimulatorError` for an unknown name) before any request."""
    if strategy not in STRATEGY_FUNCTIONS:
        raise SimulatorError(f"Unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}.")
    if strategy == EXPLORATORY and scenario.list_tool is None:
        raise StrategyUnavailable(
            f"The {scenario.name} server offers no list tool (list_tool=None), so the exploratory strategy "
            f"cannot run: there is nothing to page through. Use {CATALOG_FIRST!r}, or give the Scenario its list tool."
        )
    if strategy == EXPLORATORY and scenario.get_tool is None:
        raise StrategyUnavailable(
            f"The {scenario.name} server offers no get tool (get_tool=None), so the exploratory strategy "
            f"cannot fetch items one by one. Use {CATALOG_FIRST!r}, or give the Scenario its get tool."
        )


# --- running and measuring ------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One question answered by one strategy: the answer, whether it is right, and what it cost."""

    question_id: str
    strategy: str
    answer: Any
    expected: Any
    correct: bool
    tally: Tally
    requests: tuple[Request, ...] = field(repr=False, default=())


def run(session: Any, scenario: Scenario, strategy: str, questions: Sequence[Question]) -> list[Outcome]:
    """Answer each question with ``strategy``, each as a fresh agent, counting its requests."""
    check_available(scenario, strategy)
    answer_with = STRATEGY_FUNCTIONS[strategy]
    outcomes = []
    for question in questions:
        proxy = CountingSession(session)
        answer = answer_with(proxy, scenario, question)
        outcomes.append(
            Outcome(
                question.id,
                strategy,
                answer,
                question.expected,
                answer == question.expected,
                proxy.tally,
                tuple(proxy.requests),
            )
        )
    return outcomes


def total(outcomes: Iterable[Outcome]) -> Tally:
    return sum((o.tally for o in outcomes), Tally())


def measure(sizes: Iterable[int] = DEFAULT_SIZES, strategies: Sequence[str] = STRATEGIES) -> list[dict[str, Any]]:
    """For each sprint size, the course tracker in process, the four questions, one row per strategy.

    Each row sums the questions: size, strategy, questions, correct, round_trips,
    tool_calls, resource_reads, context_bytes. The reference answers come from the
    tracker's own data, not from the server.
    """
    from servers.client import connect
    from servers.tracker import build_server
    from servers.tracker.tracker import Tracker

    rows = []
    for size in sizes:
        tracker = Tracker.with_issues(size)
        questions = questions_for(TRACKER, [asdict(issue) for issue in tracker.issues])
        with connect(build_server(tracker)) as session:
            for strategy in strategies:
                outcomes = run(session, TRACKER, strategy, questions)
                spent = total(outcomes)
                rows.append(
                    {
                        "size": size,
                        "strategy": strategy,
                        "questions": len(outcomes),
                        "correct": sum(o.correct for o in outcomes),
                        "round_trips": spent.round_trips,
                        "tool_calls": spent.tool_calls,
                        "resource_reads": spent.resource_reads,
                        "context_bytes": spent.context_bytes,
                    }
                )
    return rows


if __name__ == "__main__":  # python -m grader.simulator: the lesson's table, and how long it took
    started = time.perf_counter()
    for row in measure():
        print(row)
    print(f"{time.perf_counter() - started:.1f} s")
