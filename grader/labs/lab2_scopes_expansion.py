"""Lab 2's hidden checks, and its full registry: the visible checks (``labkit.checks``) and these.

The hidden checks test the lab's three skills on cases the notebook does not show, against the
reference model (``grader.expansion``, ``grader.scopes``):

- the expander on generated values (hypothesis, deterministic, ``grader.labs.cases``), and on every
  credential variable of the set beside names that only look like credentials;
- the resolver on generated configurations, and on edge cases the visible tables do not combine;
- the authored configuration started for real (each stdio server, sandboxed, must answer tools/list)
  and resolved as each developer of the scenario sees it.

A disagreement of a generated case is shrunk to the smallest case. That case is for the instructor's
eyes: a learner is shown only a hidden check's title and the mistake it looks for (``as_shown``). The
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
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from grader.expansion import (
    CREDENTIAL_VARIABLES,
    REFERENCE,
    expand_text,
    is_session_secret,
)
from grader.labs.cases import smallest_disagreement
from grader.scopes import LOCAL, PROJECT, USER, resolve_sources
from labkit.checking import CheckFailed, CheckRegistry, expect, structured
from labkit.checks import lab2_scopes_expansion as visible
from labkit.checks.lab2_scopes_expansion import (
    VISIBLE_EXPANSIONS,
    VISIBLE_RESOLUTIONS,
    authored,
    learner_expand,
    learner_resolve,
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


def host_gone(exc: MCPError) -> bool:
    return exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def expand_all(host, cases: list[tuple[str, dict[str, str], bool]]) -> list[dict[str, Any]]:
    """The learner's answer to every case, in one call: {"value": ...} or {"error": why}."""
    result = host.call("expand_values", cases=[{"text": t, "env": e, "remote_field": r} for t, e, r in cases])
    answers = structured(result).get("answers")
    expect(isinstance(answers, list) and len(answers) == len(cases), "The lab server did not answer every case.")
    return answers


# --- part A: expansion -------------------------------------------------------------------------------

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


def fragments(names: list[str]):
    """Pieces of a value that references ``names`` (and pieces that only look like references)."""
    return st.one_of(
        st.sampled_from(["y", "/", "https://h", "-", " ", "Token ", "}", "$", "${", ":"]),
        st.builds(lambda v: f"${{{v}}}", st.sampled_from(names)),
        st.builds(lambda v, d: f"${{{v}:-{d}}}", st.sampled_from(names), st.sampled_from(DEFAULTS)),
        # Not references: a bare $NAME, the shell's ${NAME-d}, a name that starts with a digit, a space inside.
        st.builds(lambda v: f"${v}", st.sampled_from(names)),
        st.builds(lambda v: f"${{{v}-d}}", st.sampled_from(names)),
        st.sampled_from(["${2Y:-d}", "${V:d}", "${ V}"]),
    )


# Values are used as they are: one that holds a reference, a "$", a backslash or a group reference is not expanded again.
ENV_VALUES = ["", "u", "w/x", "${W}", "$V", "D:\\data\\2", "y}", "\\g<0>"]


def expansion_cases(names: list[str]):
    """A value over a few of the names, and an environment that sets some of them (and perhaps others)."""
    env = st.dictionaries(st.sampled_from(names + ["W"]), st.sampled_from(ENV_VALUES), max_size=3)
    return st.tuples(st.lists(fragments(names), max_size=4).map("".join), env, st.booleans())


EXPANSION_CASES = (
    st.lists(st.sampled_from(VARS), min_size=1, max_size=3, unique=True)
    .flatmap(expansion_cases)
    .filter(lambda case: expansion_key(*case) not in VISIBLE_EXPANSION_KEYS)
)


@hidden.check(
    "expand_unseen_values",
    points=3,
    title="expand_value agrees with Claude Code on generated values the lab does not show",
    mistake="mis-expands values of a kind the visible cases do not show",
    hidden=True,
)
def expand_unseen_values(host) -> None:
    errors: dict[tuple, str] = {}

    def disagrees(case) -> bool:
        text, env, remote = case
        try:
            return learner_expand(host, text, env, remote) != expand_text(text, env, blank_credentials=remote)
        except MCPError as exc:
            if host_gone(exc):
                raise
            errors[expansion_key(text, env, remote)] = exc.message
            return True

    def agree_all(cases) -> bool:
        answers = expand_all(host, cases)
        return all(
            a.get("value") == expand_text(t, e, blank_credentials=r)
            for a, (t, e, r) in zip(answers, cases, strict=True)
        )

    case = smallest_disagreement(EXPANSION_CASES, disagrees, agree_all)
    if case is not None:
        text, env, remote = case
        where = f"text={text!r}, env={env!r}, remote_field={remote}"
        error = errors.get(expansion_key(text, env, remote))
        if error:
            raise CheckFailed(f"{error.rstrip('.')} (smallest failing case: {where}).")
        raise CheckFailed(
            f"Smallest case where your expand_value differs: {where}: "
            f"expected {expand_text(text, env, blank_credentials=remote)!r}, yours {learner_expand(host, text, env, remote)!r}."
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

NAMES = st.sampled_from(["api", "files", "svc_2", "wiki"])
RVARS = ["EXE", "ROOT", "SECRET", "SEG", "ADDR", "VAULT_TOKEN", "PYPI_TOKEN"]
VALUES = st.sampled_from(
    ["y", "${SECRET}", "${SEG:-s}", "${VAULT_TOKEN}", "Token ${SECRET:-none}", "${PYPI_TOKEN:-p}/${SEG}"]
)
STDIO = st.fixed_dictionaries(
    {"command": st.sampled_from(["uvx", "${EXE:-uvx}", "node"])},
    optional={
        "type": st.just("stdio"),
        "args": st.lists(VALUES, max_size=2),
        "env": st.dictionaries(st.sampled_from(["LEVEL", "PASS"]), VALUES, max_size=2),
    },
)
REMOTE = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["http", "sse", "streamable-http"]),
        # An empty url is "not configured"; one that only expands to nothing is not.
        "url": st.sampled_from(
            [
                "https://q.example/mcp",
                "${ROOT:-https://r.example}/mcp",
                "",
                "https://s.example/${SEG}",
                "${ADDR}",
                "https://t.example/mcp?key=${PYPI_TOKEN}",
            ]
        ),
    },
    optional={"headers": st.dictionaries(st.sampled_from(["Authorization", "X-Api"]), VALUES, max_size=2)},
)
ODD = st.sampled_from([{"url": "https://u.example/mcp"}, {"type": "sdk"}])
SCOPE = st.dictionaries(NAMES, st.one_of(STDIO, REMOTE, ODD), max_size=3)
RENV = st.dictionaries(st.sampled_from(RVARS), st.sampled_from(["", "z", "https://z.example", "${SEG}"]), max_size=4)
RESOLUTION_CASES = st.tuples(SCOPE, SCOPE, SCOPE, RENV)


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
    errors: dict[str, str] = {}

    def disagrees(case) -> bool:
        user, local, project, env = case
        try:
            return learner_resolve(host, user, local, project, env) != reference_resolve(user, local, project, env)
        except MCPError as exc:
            if host_gone(exc):
                raise
            errors[repr(case)] = exc.message
            return True

    def agree_all(cases) -> bool:
        answers = resolve_all(host, cases)
        return all(a.get("value") == reference_resolve(*case) for a, case in zip(answers, cases, strict=True))

    case = smallest_disagreement(RESOLUTION_CASES, disagrees, agree_all)
    if case is not None:
        user, local, project, env = case
        where = f"user={user!r}, local={local!r}, project={project!r}, env={env!r}"
        if repr(case) in errors:
            raise CheckFailed(f"{errors[repr(case)].rstrip('.')} (smallest failing configuration: {where}).")
        raise CheckFailed(
            f"Smallest configuration where your resolve_servers differs: {where}: "
            f"expected {reference_resolve(user, local, project, env)!r}, yours {learner_resolve(host, user, local, project, env)!r}."
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
