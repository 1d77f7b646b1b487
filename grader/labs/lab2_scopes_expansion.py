"""Lab 2's checks: the learner's expander and resolver against the reference, and the
configuration they authored for the scenario.

The expander and the resolver are compared with ``grader.expansion`` and ``grader.scopes`` on
named cases from Claude Code's MCP reference, then on generated cases (hypothesis,
deterministic, ``grader.labs.cases``); a disagreement is shrunk to the smallest case, which the
feedback shows. The generated values mix several references in one value, defaults holding
``:``, ``:-``, ``$`` or the start of another reference, names that only look like
references (``$VAR``, ``${VAR-d}``, ``${1X:-d}``), values that themselves hold references,
and credential variables beside names that merely look like credentials; the generated
configurations put references in every field (``command``, ``args``, ``env``, ``url``,
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

from labkit.checking import CheckFailed, CheckRegistry, expect, structured
from grader.expansion import expand_text
from grader.labs.cases import smallest_disagreement
from grader.scopes import LOCAL, PROJECT, USER, resolve_sources
from servers.learner_host.kit_lab2 import SCENARIO

LAB = "lab2_scopes_expansion"
checks = CheckRegistry(LAB)
REPO = Path(__file__).resolve().parents[2]

# --- calling the learner ------------------------------------------------------------------


def learner_expand(host, text: str, env: dict[str, str], remote: bool = False) -> str:
    return structured(host.call("expand_value", text=text, env=env, remote_field=remote))["value"]


def learner_resolve(host, user: dict, local: dict, project: dict, env: dict[str, str]) -> dict[str, Any]:
    return structured(host.call("resolve_servers", user=user, local=local, project=project, env=env))["servers"]


def reference_resolve(user: dict, local: dict, project: dict, env: dict[str, str]) -> dict[str, Any]:
    res = resolve_sources({USER: user, LOCAL: local, PROJECT: project}, env)
    return {name: {k: v for k, v in server.items() if k != "approval"} for name, server in res.servers.items()}


def host_gone(exc: MCPError) -> bool:
    return exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


# --- part A: expansion ---------------------------------------------------------------------


def expect_expansion(host, text: str, env: dict[str, str], remote: bool, why: str) -> None:
    want = expand_text(text, env, blank_credentials=remote)
    got = learner_expand(host, text, env, remote)
    place = "a remote server's url/headers" if remote else "a value"
    expect(got == want, f"{why}: expanding {text!r} in {place} with env {env!r} must give {want!r}; yours gives {got!r}.")


@checks.check("expand_basic", points=2, title="${VAR} and ${VAR:-default} expand from the environment", mistake="mis-expands ${VAR}")
def expand_basic(host) -> None:
    expect_expansion(host, "${A}", {"A": "1"}, False, "A set variable expands")
    expect_expansion(host, "npx -y ${PKG}@latest", {"PKG": "notes"}, False, "A reference inside text expands in place")
    expect_expansion(host, "${A:-fallback}", {}, False, "An unset variable takes its default")
    expect_expansion(host, "${A}/${B:-b}", {"A": "x"}, False, "Several references expand independently")
    expect_expansion(host, "plain text", {"A": "1"}, False, "Text without references is unchanged")


@checks.check("expand_unset_stays_literal", points=1, title="an unset variable without a default stays as written", mistake="drops unset variables")
def expand_unset_stays_literal(host) -> None:
    expect_expansion(host, "${DATABASE_URL_RO}", {}, False, "An unset variable without a default stays literal")
    expect_expansion(host, "${CLAUDE_PROJECT_DIR}/server.py", {}, False, "CLAUDE_PROJECT_DIR is not in Claude Code's environment")


@checks.check("expand_empty_is_set", points=2, title="an empty string counts as set: ${VAR:-default} gives ''", mistake="applies defaults to empty strings")
def expand_empty_is_set(host) -> None:
    expect_expansion(host, "${API_BASE_URL:-https://api.example.com}/mcp", {"API_BASE_URL": ""}, False, "The seed's example")
    expect_expansion(host, "${A:-d}", {"A": ""}, False, "An empty string is a value")


@checks.check("expand_credentials_blank", points=2, title="credential variables read as empty in a remote url/headers", mistake="sends credentials to remote servers")
def expand_credentials_blank(host) -> None:
    expect_expansion(host, "Bearer ${ANTHROPIC_AUTH_TOKEN}", {"ANTHROPIC_AUTH_TOKEN": "sk-ant-secret"}, True, "A credential reads as empty")
    expect_expansion(host, "Bearer ${NPM_TOKEN:-public}", {}, True, "A credential's default is ignored")
    expect_expansion(host, "${ANTHROPIC_BASE_URL}/mcp", {"ANTHROPIC_BASE_URL": "https://proxy.internal"}, True, "A provider base URL still expands")
    expect_expansion(host, "Bearer ${API_KEY}", {"API_KEY": "k-123"}, True, "A variable outside the set expands as written")
    expect_expansion(host, "${ANTHROPIC_API_KEY}", {"ANTHROPIC_API_KEY": "sk-ant"}, False, "Outside a remote url/headers credentials expand")
    expect_expansion(host, "${AWS_SECRET_ACCESS_KEY:-none}", {"AWS_SECRET_ACCESS_KEY": "aws-s3cr3t"}, True, "Every credential variable reads as empty, not only Anthropic's")
    expect_expansion(host, "token ${GITHUB_TOKEN}", {"GITHUB_TOKEN": "gh-t"}, True, "A name that only looks like a credential expands as written")


# Plain names, credential variables, and names that only look like credentials (they expand as usual).
VARS = ["A", "B", "_x1", "ANTHROPIC_API_KEY", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY", "API_KEY", "GITHUB_TOKEN", "ANTHROPIC_BASE_URL"]
# A default runs up to the first "}": it may hold ":", ":-", "$", "{" or the start of another reference.
DEFAULTS = ["", "d", "https://e:8080", "x:-y", "-", "$B", "${B", "a b"]
FRAGMENTS = st.one_of(
    st.sampled_from(["x", "/", "https://h", "-", " ", "Bearer ", "}", "$", "${"]),
    st.builds(lambda v: "${%s}" % v, st.sampled_from(VARS)),
    st.builds(lambda v, d: "${%s:-%s}" % (v, d), st.sampled_from(VARS), st.sampled_from(DEFAULTS)),
    # Not references: a bare $NAME, the shell's ${NAME-d}, a name that starts with a digit.
    st.builds(lambda v: "$%s" % v, st.sampled_from(["A", "B"])),
    st.sampled_from(["${A-d}", "${1X:-d}", "${A:d}"]),
)
TEXTS = st.lists(FRAGMENTS, max_size=4).map("".join)
# Values are used as they are: one that holds a reference, a "$" or a backslash is not expanded again.
ENVS = st.dictionaries(st.sampled_from(VARS), st.sampled_from(["", "v", "w/x", "${B}", "$A", "C:\\tmp\\1", "x}"]), max_size=4)
EXPANSION_CASES = st.tuples(TEXTS, ENVS, st.booleans())


@checks.check("expand_matches_reference", points=3, title="the expander agrees with the reference on generated values", mistake="mis-expands ${VAR}")
def expand_matches_reference(host) -> None:
    errors: dict[tuple, str] = {}

    def disagrees(case) -> bool:
        text, env, remote = case
        try:
            return learner_expand(host, text, env, remote) != expand_text(text, env, blank_credentials=remote)
        except MCPError as exc:
            if host_gone(exc):
                raise
            errors[(text, tuple(sorted(env.items())), remote)] = exc.message
            return True

    def agree_all(cases) -> bool:
        result = host.call("expand_values", cases=[{"text": t, "env": e, "remote_field": r} for t, e, r in cases])
        answers = structured(result).get("answers") or []
        return len(answers) == len(cases) and all(
            a.get("value") == expand_text(t, e, blank_credentials=r) for a, (t, e, r) in zip(answers, cases)
        )

    case = smallest_disagreement(EXPANSION_CASES, disagrees, agree_all)
    if case is not None:
        text, env, remote = case
        where = f"text={text!r}, env={env!r}, remote_field={remote}"
        error = errors.get((text, tuple(sorted(env.items())), remote))
        if error:
            raise CheckFailed(f"{error.rstrip('.')} (smallest failing case: {where}).")
        raise CheckFailed(
            f"Smallest case where your expand_value differs: {where}: "
            f"expected {expand_text(text, env, blank_credentials=remote)!r}, yours {learner_expand(host, text, env, remote)!r}."
        )


# --- part B: the resolver --------------------------------------------------------------------


def expect_resolution(host, user: dict, local: dict, project: dict, env: dict[str, str], why: str) -> None:
    want = reference_resolve(user, local, project, env)
    got = learner_resolve(host, user, local, project, env)
    if got != want:
        raise CheckFailed(
            f"{why}. With user={user!r}, local={local!r}, project={project!r}, env={env!r} "
            f"the servers must be {want!r}; yours are {got!r}."
        )


@checks.check("resolve_precedence", points=2, title="local beats project beats user, by name", mistake="gets scope precedence wrong")
def resolve_precedence(host) -> None:
    a, b, c = ({"command": "npx", "args": [f"server-{s}"]} for s in ("user", "project", "local"))
    expect_resolution(host, {"db": a}, {"db": c}, {"db": b}, {}, "The local definition wins over project and user")
    expect_resolution(host, {"db": a}, {}, {"db": b}, {}, "The project definition wins over user")
    expect_resolution(host, {"db": a, "notes": {"command": "notes"}}, {}, {"db": b}, {}, "Servers with other names are all kept")
    # The same rule for every name, whichever scopes hold it.
    user = {"github": a, "notes": a, "tracker": a}
    local = {"notes": c, "tracker": c}
    project = {"github": b, "tracker": b, "search": b}
    expect_resolution(host, user, local, project, {}, "Each name is decided on its own: local, else project, else user")


@checks.check("resolve_no_field_merge", points=2, title="the winning entry is used whole; fields are never merged", mistake="merges fields across scopes")
def resolve_no_field_merge(host) -> None:
    user = {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp", "headers": {"Authorization": "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}"}}}
    local = {"github": {"type": "http", "url": "https://ghe.example.com/mcp"}}
    expect_resolution(host, user, local, {}, {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x"}, "The user's headers must not leak into the local entry")
    user = {"db": {"command": "npx", "args": ["pg"], "env": {"PGSSLMODE": "require"}}}
    project = {"db": {"command": "python", "args": ["db.py"]}}
    expect_resolution(host, user, {}, project, {}, "The user's env must not be merged into the project entry")


@checks.check("resolve_types_and_skips", points=2, title="type defaults, aliases and skipped entries follow Claude Code", mistake="loads entries Claude Code skips")
def resolve_types_and_skips(host) -> None:
    project = {
        "plain": {"command": "npx", "args": ["-y", "x"]},
        "alias": {"type": "streamable-http", "url": "https://a.example.com/mcp"},
        "no-type": {"url": "https://b.example.com/mcp"},
        "sdk": {"type": "sdk"},
        "placeholder": {"type": "http", "url": ""},
        "expands-to-nothing": {"type": "sse", "url": "${EVENTS_URL:-}"},
    }
    expect_resolution(
        host,
        {},
        {},
        project,
        {},
        "Missing type means stdio; streamable-http means http; url without type and type sdk are skipped; "
        "a url written as the empty string is not configured (one that only expands to nothing is kept as it is)",
    )


@checks.check("resolve_expands_fields", points=2, title="the winner's command, args, env, url and headers are expanded", mistake="mis-expands ${VAR}")
def resolve_expands_fields(host) -> None:
    # A reference in every field Claude Code expands, of a stdio, an http and an sse server, in every scope.
    project = {
        "postgres-readonly": {
            "type": "stdio",
            "command": "${PG_COMMAND:-npx}",
            "args": ["-y", "${PG_PACKAGE}@latest", "${DATABASE_URL_RO}"],
            "env": {"PGSSLMODE": "${SSL:-require}", "KEY": "${ANTHROPIC_API_KEY}"},
        },
        "github": {"type": "http", "url": "${GH_URL:-https://api.githubcopilot.com}/mcp", "headers": {"Authorization": "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}", "X-Leak": "${ANTHROPIC_API_KEY}"}},
    }
    user = {"events": {"type": "sse", "url": "https://events.example.com/${TENANT}/sse?token=${NPM_TOKEN}", "headers": {"X-Team": "${TEAM:-core}"}}}
    local = {"notes": {"command": "${PYTHON}", "args": ["-m", "${NOTES_MODULE:-servers.notes}"], "env": {"NOTES_TOKEN": "${NPM_TOKEN}"}}}
    env = {
        "PG_PACKAGE": "@modelcontextprotocol/server-postgres",
        "DATABASE_URL_RO": "postgres://ro@db/orders",
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x",
        "ANTHROPIC_API_KEY": "sk-ant",
        "TENANT": "acme",
        "NPM_TOKEN": "npm_x",
        "PYTHON": "python3",
    }
    want = reference_resolve(user, local, project, env)
    got = learner_resolve(host, user, local, project, env)
    for name, server in want.items():
        mine = got.get(name)
        expect(isinstance(mine, dict), f"The {server['scope']} server {name!r} is missing from your servers ({sorted(got)}).")
        for field, value in server.items():
            toward = "toward a remote server, where credential variables read as empty" if server["type"] != "stdio" and field in ("url", "headers") else "where every variable expands"
            expect(
                mine.get(field) == value,
                f"With env={env!r}, the {field} of the {server['type']} server {name!r} ({server['scope']} scope) must be {value!r}, "
                f"{toward}; yours is {mine.get(field)!r}.",
            )
    expect(sorted(got) == sorted(want), f"The servers must be {sorted(want)}; yours are {sorted(got)}.")


NAMES = st.sampled_from(["github", "db", "notes", "my-server"])
RVARS = ["CMD", "BASE", "TOKEN", "PART", "URLV", "ANTHROPIC_AUTH_TOKEN", "NPM_TOKEN"]
VALUES = st.sampled_from(["x", "${TOKEN}", "${PART:-p}", "${ANTHROPIC_AUTH_TOKEN}", "Bearer ${TOKEN:-none}", "${NPM_TOKEN:-n}/${PART}"])
STDIO = st.fixed_dictionaries(
    {"command": st.sampled_from(["npx", "${CMD:-npx}", "python"])},
    optional={
        "type": st.just("stdio"),
        "args": st.lists(VALUES, max_size=2),
        "env": st.dictionaries(st.sampled_from(["K", "SECRET"]), VALUES, max_size=2),
    },
)
REMOTE = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["http", "sse", "streamable-http"]),
        # An empty url is "not configured"; one that only expands to nothing is not.
        "url": st.sampled_from(
            ["https://a.example/mcp", "${BASE:-https://b.example}/mcp", "", "https://c.example/${PART}", "${URLV}", "https://d.example/mcp?key=${NPM_TOKEN}"]
        ),
    },
    optional={"headers": st.dictionaries(st.sampled_from(["Authorization", "X-Key"]), VALUES, max_size=2)},
)
ODD = st.sampled_from([{"url": "https://d.example/mcp"}, {"type": "sdk"}])
SCOPE = st.dictionaries(NAMES, st.one_of(STDIO, REMOTE, ODD), max_size=3)
RENV = st.dictionaries(st.sampled_from(RVARS), st.sampled_from(["", "v", "https://z.example", "${PART}"]), max_size=4)
RESOLUTION_CASES = st.tuples(SCOPE, SCOPE, SCOPE, RENV)


@checks.check("resolve_matches_reference", points=3, title="the resolver agrees with the reference on generated configurations", mistake="gets scope precedence wrong")
def resolve_matches_reference(host) -> None:
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
        result = host.call("resolve_many", cases=[{"user": u, "local": l, "project": p, "env": e} for u, l, p, e in cases])
        answers = structured(result).get("answers") or []
        return len(answers) == len(cases) and all(
            a.get("value") == reference_resolve(*case) for a, case in zip(answers, cases)
        )

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


# --- part C: the authored configuration --------------------------------------------------------

SECRET_LOOKING = re.compile(r"(ghp_|gho_|sk-|xox[abp]-|trk_live_|dsk_live_|AKIA)[A-Za-z0-9_\-]{4,}|\b[0-9a-f]{32,}\b")


def authored(host) -> dict[str, dict[str, Any]]:
    return structured(host.call("authored_config"))


def servers_in(config: dict[str, Any], what: str) -> dict[str, Any]:
    servers = config.get("mcpServers", config)
    expect(isinstance(servers, dict), f"{what} must map server names to entries.")
    return servers


def strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def find_server(servers: dict[str, Any], predicate) -> list[str]:
    return [name for name, entry in servers.items() if isinstance(entry, dict) and predicate(entry)]


def is_team_desk(entry) -> bool:
    return any(SCENARIO["team_server_script"] in s for s in strings(entry.get("args") or []))


def is_tracker(entry) -> bool:
    return SCENARIO["tracker_url"] in str(entry.get("url", ""))


def is_notes(entry) -> bool:
    return SCENARIO["notes_module"] in (entry.get("args") or [])


def is_experiment(entry) -> bool:
    return SCENARIO["experiment_token"] in list(strings(entry.get("env") or {}))


@checks.check("config_scopes", points=2, title="each scenario server sits in the right scope", mistake="puts servers in the wrong scope")
def config_scopes(host) -> None:
    config = authored(host)
    scopes = {
        "project (.mcp.json)": servers_in(config["PROJECT_MCP_JSON"], "PROJECT_MCP_JSON"),
        "user": servers_in(config["USER_SERVERS"], "USER_SERVERS"),
        "local": servers_in(config["LOCAL_SERVERS"], "LOCAL_SERVERS"),
    }
    wanted = {
        "the team's desk server": (is_team_desk, "project (.mcp.json)"),
        "the team's tracker": (is_tracker, "project (.mcp.json)"),
        "your notes utility": (is_notes, "user"),
        "the experimental desk with its token": (is_experiment, "local"),
    }
    for what, (predicate, scope) in wanted.items():
        where = [s for s, servers in scopes.items() if find_server(servers, predicate)]
        expect(where == [scope], f"{what} belongs in {scope} scope only; yours is in: {', '.join(where) or 'no scope'}.")


@checks.check("config_no_secret_committed", points=2, title="the committed .mcp.json holds no secret", mistake="commits secrets in .mcp.json")
def config_no_secret_committed(host) -> None:
    project = authored(host)["PROJECT_MCP_JSON"]
    for token in (SCENARIO["my_tracker_token"], SCENARIO["experiment_token"]):
        expect(not any(token in s for s in strings(project)), "A real token is written in PROJECT_MCP_JSON, which is committed to git; reference it with ${VAR} instead.")
    leaked = [s for s in strings(project) if SECRET_LOOKING.search(s)]
    expect(not leaked, f"PROJECT_MCP_JSON holds a value that looks like a secret ({len(leaked)} of them); keep secrets in the environment.")
    user = authored(host)["USER_SERVERS"]
    expect(not any(SCENARIO["experiment_token"] in s for s in strings(user)), "The experimental token belongs to this project only (local scope), not to every project (user scope).")


@checks.check("config_placeholders", points=2, title="placeholders reference the right variables, with defaults where needed", mistake="misses placeholder defaults")
def config_placeholders(host) -> None:
    config = authored(host)
    project = servers_in(config["PROJECT_MCP_JSON"], "PROJECT_MCP_JSON")
    trackers = find_server(project, is_tracker)
    expect(trackers, "The tracker is missing from PROJECT_MCP_JSON.")
    tracker = project[trackers[0]]
    expect(tracker.get("type") in ("http", "streamable-http"), 'The tracker is a remote server: its entry needs "type": "http" (a url without a type is skipped).')
    auth = (tracker.get("headers") or {}).get("Authorization", "")
    variable = SCENARIO["tracker_token_variable"]
    expect(
        re.fullmatch(r"Bearer \$\{%s(:-)?\}" % variable, auth) is not None,
        f"The tracker's Authorization header must be 'Bearer ${{{variable}}}', each developer's own token; yours is {auth!r}.",
    )
    for scope in ("PROJECT_MCP_JSON", "USER_SERVERS", "LOCAL_SERVERS"):
        for text in strings(config[scope]):
            for match in re.finditer(r"\$\{CLAUDE_PROJECT_DIR(:-[^}]*)?\}", text):
                expect(match.group(1) is not None, f"${{CLAUDE_PROJECT_DIR}} in {scope} needs a default such as ${{CLAUDE_PROJECT_DIR:-.}}: it is set in the server's environment, not Claude Code's.")
    desks = find_server(project, is_team_desk)
    expect(desks, "The team's desk server is missing from PROJECT_MCP_JSON.")
    expect(
        any("${CLAUDE_PROJECT_DIR:-" in s for s in strings(project[desks[0]].get("args") or [])),
        "Reference the team's desk script relative to the project root with ${CLAUDE_PROJECT_DIR:-.}, so it works wherever the repository is cloned.",
    )


@checks.check("config_servers_start", points=3, title="every stdio server of the resolved configuration starts and answers tools/list", mistake="writes configurations that do not start")
def config_servers_start(host) -> None:
    # What the learner configured runs sandboxed, like their answer code: the command line and
    # environment are theirs (a "-c" argument or a PYTHONPATH would otherwise run code as the grader).
    from grader.grading import sandboxed

    config = authored(host)
    env = {variable: "test-token" for variable in [SCENARIO["tracker_token_variable"]]}
    sources = {
        PROJECT: servers_in(config["PROJECT_MCP_JSON"], "PROJECT_MCP_JSON"),
        USER: servers_in(config["USER_SERVERS"], "USER_SERVERS"),
        LOCAL: servers_in(config["LOCAL_SERVERS"], "LOCAL_SERVERS"),
    }
    resolved = resolve_sources(sources, env, project=REPO)
    stdio = {name: s for name, s in resolved.servers.items() if s["type"] == "stdio"}
    expect(len(stdio) >= 3, f"The scenario has three stdio servers (team desk, notes, experimental desk); your configuration resolves to {len(stdio)}.")
    for name, server in stdio.items():
        command = server["command"]
        expect(
            Path(command).name.startswith("python"),
            f"Server {name!r}: the scenario's servers are started with python; yours runs {command!r}.",
        )
        with tempfile.TemporaryFile("w+") as stderr:
            try:
                with sandboxed([sys.executable, *server["args"]], env=server["env"], cwd=REPO, timeout=20, errlog=stderr) as session:
                    tools = session.tools()
            except Exception:  # the SDK wraps a failed start in exception groups; the server's stderr says why
                stderr.seek(0)
                said = [line.strip() for line in stderr.read().splitlines() if line.strip()]
                why = f": {said[-1]}" if said else ""
                raise CheckFailed(f"Server {name!r} did not start and answer tools/list{why}.") from None
        expect(tools, f"Server {name!r} started but lists no tools.")
