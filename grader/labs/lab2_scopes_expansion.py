"""Lab 2's hidden checks, and its full registry: the visible checks (``labkit.checks``) and these.

The hidden checks test the lab's three skills on cases the notebook does not show, against the
reference model (``grader.expansion``, ``grader.scopes``):

- the expander on generated values (derived once by hypothesis, ``grader.labs.lab2_strategies``, and stored in
  ``lab2_cases.json``), and on every credential variable of the set beside names that only look like credentials;
- the resolver on generated configurations, and on edge cases the visible tables do not combine;
- the authored configuration started for real (each stdio server, sandboxed, must answer tools/list)
  and resolved as each developer of the scenario sees it.

The generated cases are judged in one call; a disagreement is shrunk to a smallest case, within the
generated cases' vocabulary, a batch of simpler cases per call (``grader.labs.cases.smallest_disagreement``).
That case is for the instructor's eyes: a learner is shown only a hidden check's title and the mistake it looks for (``as_shown``). The
generated values use other names than the visible cases, so no generated case is one the lab shows;
they mix several references in one value, defaults holding ``:``, ``:-``, ``$`` or the start of another
reference, names that only look like references (``$VAR``, ``${VAR-d}``, a name starting with a digit), values that
themselves hold references, and credential variables beside names that merely look like credentials;
the generated configurations put references in every field (``command``, ``args``, ``env``, ``url``,
``headers``) of every scope.
"""

from __future__ import annotations

import re
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from grader.expansion import (
    CREDENTIAL_VARIABLES,
    REFERENCE,
    expand_text,
    is_session_secret,
)
from grader.labs.cases import smallest_disagreement, stored
from grader.scopes import LOCAL, PROJECT, USER, resolve_sources
from labkit.checking import CheckFailed, CheckRegistry, expect, structured
from labkit.checks import lab2_scopes_expansion as visible
from labkit.checks.lab2_scopes_expansion import (
    VISIBLE_EXPANSIONS,
    VISIBLE_RESOLUTIONS,
    authored,
    servers_in,
    strings,
)
from servers.learner_host.kit_lab2 import SCENARIO

LAB = "lab2_scopes_expansion"
hidden = CheckRegistry(LAB)
REPO = Path(__file__).resolve().parents[2]

# The notebook's graded cells, in order: each skill's visible checks, then its hidden ones.
ORDER = [
    "expand_basic",
    "expand_unset_stays_literal",
    "expand_empty_is_set",
    "expand_credentials_blank",
    "expand_matches_reference",
    "expand_unseen_values",
    "expand_unseen_credentials",
    "resolve_precedence",
    "resolve_no_field_merge",
    "resolve_types_and_skips",
    "resolve_expands_fields",
    "resolve_matches_reference",
    "resolve_unseen_configurations",
    "resolve_unseen_combinations",
    "config_scopes",
    "config_no_secret_committed",
    "config_placeholders",
    "config_servers_start",
    "config_servers_start_for_real",
    "config_per_developer",
]

# --- what the visible checks show ------------------------------------------------------------


def names_in(value: Any) -> set[str]:
    """Every variable name a value writes as a reference or as an env key, and every server name."""
    found: set[str] = set()
    if isinstance(value, str):
        found.update(m.group(1) for m in REFERENCE.finditer(value))
        found.update(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", value))
    elif isinstance(value, dict):
        for key, item in value.items():
            found.add(str(key))
            found |= names_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found |= names_in(item)
    return found


def expansion_key(text: str, env: dict[str, str], remote: bool) -> tuple:
    return text, tuple(sorted(env.items())), remote


VISIBLE_EXPANSION_KEYS = frozenset(expansion_key(text, env, remote) for text, env, remote, _, _ in VISIBLE_EXPANSIONS)
# Variable names and server names the visible cases use; the hidden cases use others.
VISIBLE_NAMES = frozenset(
    names_in([(text, env) for text, env, _, _, _ in VISIBLE_EXPANSIONS])
    | names_in([(user, local, project, env) for user, local, project, env, _, _ in VISIBLE_RESOLUTIONS])
)

# --- the reference --------------------------------------------------------------------------------


def reference_resolve(user: dict, local: dict, project: dict, env: dict[str, str]) -> dict[str, Any]:
    res = resolve_sources({USER: user, LOCAL: local, PROJECT: project}, env)
    return {name: {k: v for k, v in server.items() if k != "approval"} for name, server in res.servers.items()}


def expand_all(host, cases: list[tuple[str, dict[str, str], bool]]) -> list[dict[str, Any]]:
    """The learner's answer to every case, in one call: {"value": ...} or {"error": why}."""
    result = host.call("expand_values", cases=[{"text": t, "env": e, "remote_field": r} for t, e, r in cases])
    answers = structured(result).get("answers")
    expect(isinstance(answers, list) and len(answers) == len(cases), "The lab server did not answer every case.")
    return answers


# --- part A: expansion -------------------------------------------------------------------------------

# The vocabulary the generated values are made of (``grader.labs.lab2_strategies``), simplest first: a shrink
# replaces a piece by an earlier one of its list.
# Plain names, credential variables, and names that only look like credentials (they expand as usual);
# none of them is a name the visible cases use.
VARS = [
    "V",
    "W",
    "_v1",
    "VAULT_TOKEN",
    "PYPI_TOKEN",
    "AZURE_CLIENT_SECRET",
    "HTTP_PROXY",
    "SERVICE_KEY",
    "GH_ENTERPRISE_TOKEN",
    "CLAUDE_CODE_API_BASE_URL",
]
# A default runs up to the first "}": it may hold ":", ":-", "$", "{" or the start of another reference.
DEFAULTS = ["", "d", "https://e:8443", "p:-q", "-", "$W", "${W", "a b"]
# Pieces that are no reference, and references a value may hold that are not references at all.
LITERALS = ["y", "/", "https://h", "-", " ", "Token ", "}", "$", "${", ":"]
ODD_REFERENCES = ["${2Y:-d}", "${V:d}", "${ V}"]
# Values are used as they are: one that holds a reference, a "$", a backslash or a group reference is not expanded again.
ENV_VALUES = ["", "u", "w/x", "${W}", "$V", "D:\\data\\2", "y}", "\\g<0>"]

CASES_FILE = Path(__file__).with_name("lab2_cases.json")


@cache
def generated_cases() -> dict[str, list]:
    """The stored generated cases: expansions as (pieces, env, remote_field), configurations as (user, local,
    project, env)."""
    kinds = stored(CASES_FILE)
    return {
        "expansion": [(tuple(pieces), env, remote) for pieces, env, remote in kinds["expansion"]],
        "resolution": [tuple(case) for case in kinds["resolution"]],
    }


def generated_expansions() -> list[tuple[str, dict[str, str], bool]]:
    """The generated expansion cases as the learner's code is given them: (text, env, remote_field)."""
    return [as_text(case) for case in generated_cases()["expansion"]]


def generated_configurations() -> list[tuple]:
    return generated_cases()["resolution"]


def as_text(case: tuple) -> tuple[str, dict[str, str], bool]:
    pieces, env, remote = case
    return "".join(pieces), env, remote


# A piece that references a name, in the strategy's order of kinds: ${V}, ${V:-default}, $V, ${V-d}.
PIECE_FORMS = (
    (re.compile(r"\$\{(\w+)\}"), "${{{}}}"),
    (re.compile(r"\$\{(\w+):-([^}]*)\}"), "${{{}:-{}}}"),
    (re.compile(r"\$(\w+)"), "${}"),
    (re.compile(r"\$\{(\w+)-d\}"), "${{{}-d}}"),
)


def piece_parts(piece: str) -> tuple[int, list[str]] | None:
    """Which form a piece that references a name has, and its name (and default); None for any other piece."""
    if piece in LITERALS or piece in ODD_REFERENCES:
        return None
    for form, (pattern, _) in enumerate(PIECE_FORMS):
        match = pattern.fullmatch(piece)
        if match:
            return form, list(match.groups())
    return None


def make_piece(form: int, parts: list[str]) -> str:
    return PIECE_FORMS[form][1].format(*parts)


def earlier(vocabulary: list, value) -> list:
    """The values before ``value`` in its vocabulary (simpler ones), or none when it is not in it."""
    return list(vocabulary[: vocabulary.index(value)]) if value in vocabulary else []


def index_in(vocabulary: list, value) -> int:
    return vocabulary.index(value) if value in vocabulary else len(vocabulary)


def piece_rank(piece: str) -> int:
    """A literal before a reference, ${V} before ${V:-d} before $V before ${V-d}, each kind's words in their order."""
    parts = piece_parts(piece)
    if parts is None:
        if piece in LITERALS:
            return LITERALS.index(piece)
        return 500 + index_in(ODD_REFERENCES, piece)
    form, (name, *default) = parts
    return 100 * (form + 1) + 10 * index_in(VARS, name) + (index_in(DEFAULTS, default[0]) if default else 0)


def expansion_order(case: tuple) -> tuple:
    """Simpler first: fewer pieces and variables, then the earlier kinds and words of the vocabulary, then the
    shorter value."""
    pieces, env, remote = case
    count = len(pieces) + len(env) + int(remote)
    rank = sum(map(piece_rank, pieces)) + sum(index_in(VARS, k) + index_in(ENV_VALUES, v) for k, v in env.items())
    chars = sum(map(len, pieces)) + sum(len(k) + len(v) for k, v in env.items())
    return count, rank, chars, repr(case)


def renamed(case: tuple, old: str, new: str) -> tuple:
    pieces, env, remote = case
    out = []
    for piece in pieces:
        parts = piece_parts(piece)
        if parts is not None and parts[1][0] == old:
            piece = make_piece(parts[0], [new, *parts[1][1:]])
        out.append(piece)
    return tuple(out), {new if k == old else k: v for k, v in env.items()}, remote


def in_expansion_space(case: tuple) -> bool:
    """Whether ``case`` is one the expansion strategy could generate: at most four pieces of the vocabulary over at
    most three names (and W), at most three variables set to values of the vocabulary, and not a case the lab shows."""
    pieces, env, remote = case
    names = set(env)
    for piece in pieces:
        parts = piece_parts(piece)
        if parts is None:
            if piece not in LITERALS and piece not in ODD_REFERENCES:
                return False
            continue
        form, (name, *default) = parts
        if name not in VARS or (default and default[0] not in DEFAULTS):
            return False
        names.add(name)
    return (
        len(pieces) <= 4
        and len(env) <= 3
        and names <= set(VARS)
        and len(names - {"W"}) <= 3
        and all(value in ENV_VALUES for value in env.values())
        and isinstance(remote, bool)
        and expansion_key(*as_text(case)) not in VISIBLE_EXPANSION_KEYS
    )


def simpler_expansions(case: tuple):
    """Each case one step simpler than ``case``, within the generated vocabulary: a piece left out or made simpler,
    a variable renamed to an earlier name (in the value and the environment alike), a variable unset or set to an
    earlier value, the field made local. None is a case the lab shows."""
    pieces, env, remote = case
    names = set(env)
    for piece in pieces:
        parts = piece_parts(piece)
        if parts is not None:
            names.add(parts[1][0])
    out = []
    for i, piece in enumerate(pieces):
        out.append((pieces[:i] + pieces[i + 1 :], env, remote))
        simples = earlier(LITERALS, piece) if piece in LITERALS else [LITERALS[0]]
        simples += earlier(ODD_REFERENCES, piece)
        parts = piece_parts(piece)
        if parts is not None:
            form, (name, *default) = parts
            simples += [make_piece(0, [name]), make_piece(1, [name, DEFAULTS[0]])][:form]  # an earlier kind
            if default:
                simples += [make_piece(1, [name, simple]) for simple in earlier(DEFAULTS, default[0])]
        for simple in simples:
            out.append((pieces[:i] + (simple,) + pieces[i + 1 :], env, remote))
    for name in sorted(names):
        for other in earlier(VARS, name):
            if other not in names:
                out.append(renamed(case, name, other))
    for key, value in env.items():
        out.append((pieces, {k: v for k, v in env.items() if k != key}, remote))
        for simple in earlier(ENV_VALUES, value):
            out.append((pieces, {**env, key: simple}, remote))
    if remote:
        out.append((pieces, env, False))
    return [c for c in out if in_expansion_space(c)]


@hidden.check(
    "expand_unseen_values",
    points=3,
    title="expand_value agrees with Claude Code on generated values the lab does not show",
    mistake="mis-expands values of a kind the visible cases do not show",
    hidden=True,
)
def expand_unseen_values(host) -> None:
    answers: dict[str, dict[str, Any]] = {}

    def disagree_all(cases: list[tuple]) -> list[bool]:
        texts = [as_text(case) for case in cases]
        for case, answer in zip(cases, expand_all(host, texts), strict=True):
            answers[repr(case)] = answer
        return [
            answers[repr(case)].get("value") != expand_text(t, e, blank_credentials=r)
            for case, (t, e, r) in zip(cases, texts, strict=True)
        ]

    case = smallest_disagreement(generated_cases()["expansion"], disagree_all, simpler_expansions, expansion_order)
    if case is not None:
        text, env, remote = as_text(case)
        where = f"text={text!r}, env={env!r}, remote_field={remote}"
        answer = answers[repr(case)]
        if "error" in answer:
            raise CheckFailed(f"{answer['error'].rstrip('.')} (smallest failing case: {where}).")
        raise CheckFailed(
            f"Smallest case where your expand_value differs: {where}: "
            f"expected {expand_text(text, env, blank_credentials=remote)!r}, yours {answer.get('value')!r}."
        )


# Names that only look like credentials: they expand as usual, toward remote servers too.
LOOK_ALIKES = sorted(
    {
        "GH_ENTERPRISE_TOKEN",
        "HF_TOKEN",
        "OPENAI_API_KEY",
        "MY_NPM_TOKEN",
        "NPM_TOKEN_RO",
        "AWS_ACCESS_KEY_ID",
        "SLACK_BOT_TOKEN",
        "DATABASE_PASSWORD",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_VERTEX_BASE_URL",
        "VAULT_ADDR",
        "TOKEN",
    }
    - VISIBLE_NAMES
)
HIDDEN_CREDENTIALS = sorted(set(CREDENTIAL_VARIABLES) - VISIBLE_NAMES)


def credential_cases() -> list[tuple[str, dict[str, str], bool]]:
    """Each credential variable the visible cases do not name, toward a remote server set and unset (with a
    default) and, where the lab's rule is Claude Code's, in a local value; and each look-alike toward a remote server."""
    cases = []
    for i, name in enumerate(HIDDEN_CREDENTIALS):
        value = f"s3cret-{i}"
        cases.append((f"Token ${{{name}}}", {name: value}, True))
        cases.append((f"${{{name}:-fallback}}/x", {}, True))
        if not is_session_secret(
            name
        ):  # Claude Code blanks its own session secrets everywhere: the lab leaves that out
            cases.append((f"--key=${{{name}}}", {name: value}, False))
    for i, name in enumerate(LOOK_ALIKES):
        cases.append((f"Token ${{{name}}}", {name: f"open-{i}"}, True))
    return cases


@hidden.check(
    "expand_unseen_credentials",
    points=2,
    title="every credential variable of the set reads as empty toward a remote server, and only there",
    mistake="blanks only some of the credential variables, or blanks names that merely look like credentials",
    hidden=True,
)
def expand_unseen_credentials(host) -> None:
    cases = credential_cases()
    answers = expand_all(host, cases)
    wrong = [
        (case, answer)
        for case, answer in zip(cases, answers, strict=True)
        if answer.get("value") != expand_text(case[0], case[1], blank_credentials=case[2])
    ]
    if wrong:
        (text, env, remote), answer = wrong[0]
        place = "a remote server's url/headers" if remote else "a value"
        got = f"raised: {answer['error']}" if "error" in answer else f"gives {answer.get('value')!r}"
        raise CheckFailed(
            f"Your expand_value gets {len(wrong)} of {len(cases)} credential cases wrong; the first: expanding {text!r} in {place} "
            f"with env {env!r} must give {expand_text(text, env, blank_credentials=remote)!r}; yours {got}."
        )


# --- part B: the resolver ---------------------------------------------------------------------------

# The vocabulary the generated configurations are made of (``grader.labs.lab2_strategies``), simplest first.
SERVER_NAMES = ["api", "files", "svc_2", "wiki"]
RVARS = ["EXE", "ROOT", "SECRET", "SEG", "ADDR", "VAULT_TOKEN", "PYPI_TOKEN"]
VALUE_TEXTS = ["y", "${SECRET}", "${SEG:-s}", "${VAULT_TOKEN}", "Token ${SECRET:-none}", "${PYPI_TOKEN:-p}/${SEG}"]
COMMANDS = ["uvx", "${EXE:-uvx}", "node"]
ENV_KEYS = ["LEVEL", "PASS"]
REMOTE_TYPES = ["http", "sse", "streamable-http"]
# An empty url is "not configured"; one that only expands to nothing is not.
URLS = [
    "https://q.example/mcp",
    "${ROOT:-https://r.example}/mcp",
    "",
    "https://s.example/${SEG}",
    "${ADDR}",
    "https://t.example/mcp?key=${PYPI_TOKEN}",
]
HEADER_KEYS = ["Authorization", "X-Api"]
ODD_ENTRIES = [{"url": "https://u.example/mcp"}, {"type": "sdk"}]
RENV_VALUES = ["", "z", "https://z.example", "${SEG}"]
# Each scope's weight in the order: a configuration that needs one entry shows it in project scope.
SCOPE_WEIGHT = (2, 1, 0)


def items_of(value: Any) -> int:
    if isinstance(value, dict):
        return sum(1 + items_of(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(1 + items_of(item) for item in value)
    return 0


def chars_of(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(key) + chars_of(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return sum(map(chars_of, value))
    return 0


def entry_rank(entry: dict[str, Any]) -> int:
    """A stdio entry before a remote one before an odd one, each field's words in their order."""
    if entry in ODD_ENTRIES:
        return 200 + ODD_ENTRIES.index(entry)
    values = [*entry.get("args", []), *entry.get("env", {}).values(), *entry.get("headers", {}).values()]
    rank = sum(index_in(VALUE_TEXTS, value) for value in values)
    rank += sum(index_in(ENV_KEYS, key) for key in entry.get("env", {}))
    rank += sum(index_in(HEADER_KEYS, key) for key in entry.get("headers", {}))
    if "command" in entry:
        return rank + index_in(COMMANDS, entry["command"])
    return 100 + rank + index_in(REMOTE_TYPES, entry.get("type")) + index_in(URLS, entry.get("url"))


def resolution_order(case: tuple) -> tuple:
    """Simpler first: fewer entries, fields and items, then the earlier kinds and words of the vocabulary and the
    later scopes, then the shorter strings."""
    scopes, env = case[:3], case[3]
    rank = sum(index_in(RVARS, key) + index_in(RENV_VALUES, value) for key, value in env.items())
    for weight, scope in zip(SCOPE_WEIGHT, scopes, strict=True):
        rank += sum(weight + index_in(SERVER_NAMES, name) + entry_rank(entry) for name, entry in scope.items())
    return items_of(list(case)), rank, chars_of(list(case)), repr(case)


# The fields of an entry in the order the strategies write them.
FIELD_ORDER = ("command", "type", "url", "args", "env", "headers")


def canonical(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: entry[key] for key in sorted(entry, key=lambda k: index_in(list(FIELD_ORDER), k))}


def simpler_entries(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """An entry one step simpler: an optional field or an item left out, a value replaced by an earlier one of its
    vocabulary, or the simplest entry of an earlier kind (stdio, then remote, then the odd ones) in its place; the
    fields in the strategies' order."""
    out: list[dict[str, Any]] = []

    def put(key: str, value: Any) -> None:
        out.append({k: (value if k == key else v) for k, v in entry.items()})

    def items(key: str, keys: list[str]) -> None:
        mapping = entry[key]
        for name, value in mapping.items():
            put(key, {k: v for k, v in mapping.items() if k != name})
            for other in earlier(keys, name):
                if other not in mapping:
                    put(key, {(other if k == name else k): v for k, v in mapping.items()})
            for simple in earlier(VALUE_TEXTS, value):
                put(key, {**mapping, name: simple})

    if "command" not in entry:  # the simplest entry of an earlier kind
        out.append({"command": COMMANDS[0]})
    if entry in ODD_ENTRIES:
        out.append({"type": REMOTE_TYPES[0], "url": URLS[0]})
        out.extend(dict(odd) for odd in earlier(ODD_ENTRIES, entry))
        return [canonical(e) for e in out]
    if "command" in entry:  # stdio
        for simple in earlier(COMMANDS, entry["command"]):
            put("command", simple)
        for optional in ("type", "args", "env"):
            if optional in entry:
                out.append({k: v for k, v in entry.items() if k != optional})
        for i, value in enumerate(entry.get("args", [])):
            args = entry["args"]
            put("args", args[:i] + args[i + 1 :])
            for simple in earlier(VALUE_TEXTS, value):
                put("args", [*args[:i], simple, *args[i + 1 :]])
        if "env" in entry:
            items("env", ENV_KEYS)
    else:  # remote
        for simple in earlier(REMOTE_TYPES, entry["type"]):
            put("type", simple)
        for simple in earlier(URLS, entry["url"]):
            put("url", simple)
        if "headers" in entry:
            out.append({k: v for k, v in entry.items() if k != "headers"})
            items("headers", HEADER_KEYS)
    return [canonical(e) for e in out]


def entry_in_space(entry: Any) -> bool:
    def mapping(value: Any, keys: list[str]) -> bool:
        return (
            isinstance(value, dict)
            and len(value) <= 2
            and set(value) <= set(keys)
            and set(value.values()) <= set(VALUE_TEXTS)
        )

    if not isinstance(entry, dict):
        return False
    if entry in ODD_ENTRIES:
        return True
    if "command" in entry:
        return (
            set(entry) <= {"command", "type", "args", "env"}
            and entry["command"] in COMMANDS
            and entry.get("type", "stdio") == "stdio"
            and isinstance(entry.get("args", []), list)
            and len(entry.get("args", [])) <= 2
            and set(entry.get("args", [])) <= set(VALUE_TEXTS)
            and mapping(entry.get("env", {}), ENV_KEYS)
        )
    return (
        {"type", "url"} <= set(entry) <= {"type", "url", "headers"}
        and entry["type"] in REMOTE_TYPES
        and entry["url"] in URLS
        and mapping(entry.get("headers", {}), HEADER_KEYS)
    )


def in_resolution_space(case: tuple) -> bool:
    """Whether ``case`` is one the configuration strategy could generate: three scopes of at most three entries each,
    named from the vocabulary, each entry stdio, remote or one of the odd ones, made of the vocabulary's words, and at
    most four variables set."""
    *scopes, env = case
    return (
        len(scopes) == 3
        and all(
            isinstance(scope, dict)
            and len(scope) <= 3
            and set(scope) <= set(SERVER_NAMES)
            and all(map(entry_in_space, scope.values()))
            for scope in scopes
        )
        and isinstance(env, dict)
        and len(env) <= 4
        and set(env) <= set(RVARS)
        and set(env.values()) <= set(RENV_VALUES)
    )


def simpler_configurations(case: tuple) -> list[tuple]:
    """Each configuration one step simpler than ``case``, within the generated vocabulary: an entry left out, moved to
    a later scope or made simpler, a server renamed to an earlier name in every scope, a variable unset or set to an
    earlier value."""
    scopes, env = list(case[:3]), case[3]
    out = []

    def with_scope(i: int, scope: dict) -> tuple:
        return (*scopes[:i], scope, *scopes[i + 1 :], env)

    names = {name for scope in scopes for name in scope}
    for i, scope in enumerate(scopes):
        for name, entry in scope.items():
            out.append(with_scope(i, {k: v for k, v in scope.items() if k != name}))
            for j in range(i + 1, 3):
                if name not in scopes[j]:
                    moved = list(scopes)
                    moved[i] = {k: v for k, v in scope.items() if k != name}
                    moved[j] = {**scopes[j], name: entry}
                    out.append((*moved, env))
            for simple in simpler_entries(entry):
                out.append(with_scope(i, {**scope, name: simple}))
    for name in sorted(names):
        for other in earlier(SERVER_NAMES, name):
            if other not in names:
                out.append((*({(other if k == name else k): v for k, v in scope.items()} for scope in scopes), env))
    for key, value in env.items():
        out.append((*scopes, {k: v for k, v in env.items() if k != key}))
        for simple in earlier(RENV_VALUES, value):
            out.append((*scopes, {**env, key: simple}))
    out = [(*({name: canonical(entry) for name, entry in scope.items()} for scope in c[:3]), c[3]) for c in out]
    return [c for c in out if in_resolution_space(c)]


def resolve_all(host, cases: list[tuple]) -> list[dict[str, Any]]:
    result = host.call(
        "resolve_many", cases=[{"user": u, "local": lo, "project": p, "env": e} for u, lo, p, e in cases]
    )
    answers = structured(result).get("answers")
    expect(isinstance(answers, list) and len(answers) == len(cases), "The lab server did not answer every case.")
    return answers


@hidden.check(
    "resolve_unseen_configurations",
    points=3,
    title="resolve_servers agrees with Claude Code on generated configurations the lab does not show",
    mistake="mis-resolves configurations of a kind the visible cases do not show",
    hidden=True,
)
def resolve_unseen_configurations(host) -> None:
    answers: dict[str, dict[str, Any]] = {}

    def disagree_all(cases: list[tuple]) -> list[bool]:
        for case, answer in zip(cases, resolve_all(host, cases), strict=True):
            answers[repr(case)] = answer
        return [answers[repr(case)].get("value") != reference_resolve(*case) for case in cases]

    case = smallest_disagreement(generated_configurations(), disagree_all, simpler_configurations, resolution_order)
    if case is not None:
        user, local, project, env = case
        where = f"user={user!r}, local={local!r}, project={project!r}, env={env!r}"
        answer = answers[repr(case)]
        if "error" in answer:
            raise CheckFailed(f"{answer['error'].rstrip('.')} (smallest failing configuration: {where}).")
        raise CheckFailed(
            f"Smallest configuration where your resolve_servers differs: {where}: "
            f"expected {reference_resolve(user, local, project, env)!r}, yours {answer.get('value')!r}."
        )


# (user, local, project, env): combinations the visible tables do not show.
UNSEEN_COMBINATIONS = (
    # A skipped entry in a higher scope does not claim its name: the next scope's entry is used.
    ({}, {"wiki": {"url": "https://w.example/mcp"}}, {"wiki": {"command": "uvx", "args": ["wiki-mcp"]}}, {}),
    ({"files": {"type": "sse", "url": "https://f.example/sse"}}, {}, {"files": {"type": "sdk"}}, {}),
    (
        {"api": {"command": "node", "args": ["api.js"]}},
        {"api": {"type": "sdk"}},
        {"api": {"url": "https://x.example/mcp"}},
        {},
    ),
    ({"solo": {"type": "sdk"}}, {"solo": {"url": "https://y.example/mcp"}}, {}, {}),
    # A credential toward a remote server is blanked; in a stdio server's env it expands.
    (
        {"vault-cli": {"command": "vault-mcp", "env": {"VAULT_TOKEN": "${VAULT_TOKEN}", "ZONE": "${REGION:-us}"}}},
        {},
        {
            "vault": {
                "type": "sse",
                "url": "https://vault.example/${REGION}/sse",
                "headers": {"X-Vault-Token": "${VAULT_TOKEN}", "X-Zone": "${REGION}"},
            }
        },
        {"VAULT_TOKEN": "hvs.x", "REGION": "eu"},
    ),
    # A local stdio entry replaces a remote user entry whole, its own defaults applied.
    (
        {
            "finder": {
                "type": "streamable-http",
                "url": "https://s.example/mcp",
                "headers": {"X-Finder-Key": "${FINDER_KEY}"},
            }
        },
        {"finder": {"type": "stdio", "command": "${FINDER_CMD:-finder-mcp}", "env": {"MODE": "${MODE:-}"}}},
        {},
        {"FINDER_KEY": "fk"},
    ),
    # A local placeholder overrides a working project entry; its headers still expand.
    (
        {},
        {"ci": {"type": "http", "url": "", "headers": {"Authorization": "Bearer ${CI_TOKEN:-none}"}}},
        {"ci": {"type": "http", "url": "https://ci.example/mcp"}},
        {"CI_TOKEN": "c1"},
    ),
    # Empty scopes and an empty environment.
    ({}, {}, {}, {}),
)


@hidden.check(
    "resolve_unseen_combinations",
    points=2,
    title="resolve_servers on combinations of the rules the lab does not show",
    mistake="mishandles combinations the visible cases do not show, such as a skipped entry above a usable one",
    hidden=True,
)
def resolve_unseen_combinations(host) -> None:
    answers = resolve_all(host, list(UNSEEN_COMBINATIONS))
    for (user, local, project, env), answer in zip(UNSEEN_COMBINATIONS, answers, strict=True):
        want = reference_resolve(user, local, project, env)
        where = f"user={user!r}, local={local!r}, project={project!r}, env={env!r}"
        if "error" in answer:
            raise CheckFailed(f"{answer['error'].rstrip('.')} (configuration: {where}).")
        expect(
            answer.get("value") == want,
            f"With {where} the servers must be {want!r}; yours are {answer.get('value')!r}.",
        )


# --- part C: the authored configuration ---------------------------------------------------------------


def authored_sources(host) -> dict[str, dict[str, Any]]:
    config = authored(host)
    return {
        PROJECT: servers_in(config["PROJECT_MCP_JSON"], "PROJECT_MCP_JSON"),
        USER: servers_in(config["USER_SERVERS"], "USER_SERVERS"),
        LOCAL: servers_in(config["LOCAL_SERVERS"], "LOCAL_SERVERS"),
    }


@hidden.check(
    "config_servers_start_for_real",
    points=3,
    title="every stdio server of the resolved configuration starts for real and answers tools/list",
    mistake="writes configurations whose servers do not start",
    hidden=True,
)
def config_servers_start_for_real(host) -> None:
    # What the learner configured runs sandboxed, like their answer code: the command line and
    # environment are theirs (a "-c" argument or a PYTHONPATH would otherwise run code as the grader). The engine
    # gives the host's session the means (grader.engine.grading.sandboxed).
    sandboxed = host.sandboxed
    env = dict.fromkeys([SCENARIO["tracker_token_variable"]], "test-token")
    resolved = resolve_sources(authored_sources(host), env, project=REPO)
    stdio = {name: s for name, s in resolved.servers.items() if s["type"] == "stdio"}
    expect(
        len(stdio) >= 3,
        f"The scenario has three stdio servers (team desk, notes, experimental desk); your configuration resolves to {len(stdio)}.",
    )
    for name, server in stdio.items():
        command = server["command"]
        expect(
            Path(command).name.startswith("python"),
            f"Server {name!r}: the scenario's servers are started with python; yours runs {command!r}.",
        )
        with tempfile.TemporaryFile("w+") as stderr:
            try:
                with sandboxed(
                    [sys.executable, *server["args"]], env=server["env"], cwd=REPO, timeout=20, errlog=stderr
                ) as session:
                    tools = session.tools()
            except Exception:  # noqa: BLE001 - the SDK wraps a failed start in exception groups; the server's stderr says why
                stderr.seek(0)
                said = [line.strip() for line in stderr.read().splitlines() if line.strip()]
                why = f": {said[-1]}" if said else ""
                raise CheckFailed(f"Server {name!r} did not start and answer tools/list{why}.") from None
        expect(tools, f"Server {name!r} started but lists no tools.")


# Each developer's own tracker token, as the environment holds it.
TEAMMATE_TOKEN, YOUR_TOKEN = "trk_test_teammate_61d0", "trk_test_yours_2b7e"
ROLES = {
    "the team's desk server": lambda s: any(
        str(a).endswith(SCENARIO["team_server_script"]) for a in s.get("args") or []
    ),
    "the team's tracker": lambda s: SCENARIO["tracker_url"] in str(s.get("url", "")),
    "your notes utility": lambda s: SCENARIO["notes_module"] in (s.get("args") or []),
    "the experimental desk": lambda s: SCENARIO["experiment_token"] in [str(v) for v in (s.get("env") or {}).values()],
}
# (who, the scopes they have, their token, the servers they must get).
VIEWS = (
    ("You, in this project", (PROJECT, USER, LOCAL), YOUR_TOKEN, set(ROLES)),
    (
        "A teammate who clones the repository",
        (PROJECT,),
        TEAMMATE_TOKEN,
        {"the team's desk server", "the team's tracker"},
    ),
    ("You, in another project", (USER,), YOUR_TOKEN, {"your notes utility"}),
)


@hidden.check(
    "config_per_developer",
    points=2,
    title="each developer of the scenario gets exactly the servers meant for them, with their own token",
    mistake="a server shadowed by another of the same name, or reaching developers it is not meant for",
    hidden=True,
)
def config_per_developer(host) -> None:
    sources = authored_sources(host)
    for who, scopes, token, wanted in VIEWS:
        seen = {scope: sources[scope] if scope in scopes else {} for scope in (PROJECT, USER, LOCAL)}
        servers = resolve_sources(seen, {SCENARIO["tracker_token_variable"]: token}, project=REPO).servers
        for role, matches in ROLES.items():
            names = [name for name, server in servers.items() if matches(server)]
            if role in wanted:
                expect(
                    names,
                    f"{who}: {role} is not among the servers Claude Code uses ({', '.join(sorted(servers)) or 'none'}); "
                    "is it skipped, or hidden by an entry of the same name in a scope that wins?",
                )
                expect(len(names) == 1, f"{who}: {role} is configured {len(names)} times ({', '.join(names)}).")
            else:
                expect(not names, f"{who}: they get {role} ({', '.join(names)}), which is not meant for them.")
        for name, server in servers.items():
            if ROLES["the team's tracker"](server):
                auth = (server.get("headers") or {}).get("Authorization")
                expect(
                    auth == f"Bearer {token}",
                    f"{who}: the tracker {name!r} must send 'Bearer ' and their own token; it sends {auth!r}.",
                )
        if who != VIEWS[0][0]:
            for secret in (SCENARIO["my_tracker_token"], SCENARIO["experiment_token"]):
                expect(
                    not any(secret in s for s in strings(servers)),
                    f"{who}: your own token reaches their configuration.",
                )


checks = CheckRegistry.combined(LAB, ORDER, visible.checks, hidden)
