"""Lab 2's visible checks: the learner's expander, resolver and configuration on fixed cases.

Every case's answer is written out here, as Claude Code gives it (*Claude Code docs, MCP* and the
lab's rules), never computed: these checks ship to learners. Each table holds the traps of its skill:
an empty value that counts as set, a default holding ``:`` or ``$``, names that only look like
references, values that themselves hold references, credentials toward a remote server, scopes
overriding each other whole, entries Claude Code skips. The grader adds hidden checks of the same
skills on cases none of these tables shows (``grader.labs.lab2_scopes_expansion``).

Part C judges the configuration as written: where each server sits, that no secret is committed,
the placeholders, and that each stdio server is written so that it can start (python, and a script
or module of the scenario), without starting it: the scenario's servers are not part of a learner's
environment.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from labkit.checking import CheckFailed, CheckRegistry, expect, structured
from servers.learner_host.kit_lab2 import SCENARIO

LAB = "lab2_scopes_expansion"
checks = CheckRegistry(LAB)

# --- calling the learner ------------------------------------------------------------------


def learner_expand(host, text: str, env: dict[str, str], remote: bool = False) -> str:
    return structured(host.call("expand_value", text=text, env=env, remote_field=remote))["value"]


def learner_resolve(host, user: dict, local: dict, project: dict, env: dict[str, str]) -> dict[str, Any]:
    return structured(host.call("resolve_servers", user=user, local=local, project=project, env=env))["servers"]


# --- part A: expansion ---------------------------------------------------------------------
# A case: (text, env, remote_field, what Claude Code gives, why).

EXPAND_BASIC = (
    ("${A}", {"A": "1"}, False, "1", "A set variable expands"),
    (
        "npx -y ${PKG}@latest",
        {"PKG": "notes"},
        False,
        "npx -y notes@latest",
        "A reference inside text expands in place",
    ),
    ("${A:-fallback}", {}, False, "fallback", "An unset variable takes its default"),
    ("${A}/${B:-b}", {"A": "x"}, False, "x/b", "Several references expand independently"),
    ("plain text", {"A": "1"}, False, "plain text", "Text without references is unchanged"),
)
EXPAND_UNSET = (
    ("${DATABASE_URL_RO}", {}, False, "${DATABASE_URL_RO}", "An unset variable without a default stays literal"),
    (
        "${CLAUDE_PROJECT_DIR}/server.py",
        {},
        False,
        "${CLAUDE_PROJECT_DIR}/server.py",
        "CLAUDE_PROJECT_DIR is not in Claude Code's environment",
    ),
    ("${HOST}:${PORT}", {"HOST": "db"}, False, "db:${PORT}", "An unset variable stays literal beside one that expands"),
)
EXPAND_EMPTY = (
    (
        "${API_BASE_URL:-https://api.example.com}/mcp",
        {"API_BASE_URL": ""},
        False,
        "/mcp",
        "The docs' example of an empty API_BASE_URL",
    ),
    ("${A:-d}", {"A": ""}, False, "", "An empty string is a value"),
    ("x${A:-d}y", {"A": ""}, True, "xy", "An empty string is a value in a remote url/headers too"),
)
EXPAND_CREDENTIALS = (
    (
        "Bearer ${ANTHROPIC_AUTH_TOKEN}",
        {"ANTHROPIC_AUTH_TOKEN": "sk-ant-secret"},
        True,
        "Bearer ",
        "A credential reads as empty",
    ),
    ("Bearer ${NPM_TOKEN:-public}", {}, True, "Bearer ", "A credential's default is ignored"),
    (
        "${ANTHROPIC_BASE_URL}/mcp",
        {"ANTHROPIC_BASE_URL": "https://proxy.internal"},
        True,
        "https://proxy.internal/mcp",
        "A provider base URL still expands",
    ),
    ("Bearer ${API_KEY}", {"API_KEY": "k-123"}, True, "Bearer k-123", "A variable outside the set expands as written"),
    (
        "${ANTHROPIC_API_KEY}",
        {"ANTHROPIC_API_KEY": "sk-ant"},
        False,
        "sk-ant",
        "Outside a remote url/headers credentials expand",
    ),
    (
        "${AWS_SECRET_ACCESS_KEY:-none}",
        {"AWS_SECRET_ACCESS_KEY": "aws-s3cr3t"},
        True,
        "",
        "Every credential variable reads as empty, not only Anthropic's",
    ),
    (
        "token ${GITHUB_TOKEN}",
        {"GITHUB_TOKEN": "gh-t"},
        True,
        "token gh-t",
        "A name that only looks like a credential expands as written",
    ),
)
# The traps of the syntax, each on its own and mixed.
EXPAND_TABLE = (
    ("${A:-}", {}, False, "", "An empty default is a default"),
    ("${URL:-https://e:8080}/x", {}, False, "https://e:8080/x", "A default may hold ':'"),
    ("${A:-x:-y}", {}, False, "x:-y", "A default may hold ':-'"),
    ("${A:-$B}", {"B": "b"}, False, "$B", "A default is literal text: its '$B' is not a reference"),
    ("${A:-${B}}", {"B": "b"}, False, "${B}", "A default runs up to the first '}'"),
    ("${A:-d}${B}", {"B": "2"}, False, "d2", "A default ends at its own '}', not at the last one"),
    ("$A and ${A}", {"A": "1"}, False, "$A and 1", "$NAME without braces is not a reference"),
    ("${A-d}", {}, False, "${A-d}", "The shell's ${NAME-default} is not a reference"),
    ("${1X:-d}", {}, False, "${1X:-d}", "A name cannot start with a digit"),
    ("${A:d}", {}, False, "${A:d}", "A default needs ':-'"),
    (
        "${A}",
        {"A": "${B}", "B": "2"},
        False,
        "${B}",
        "A value is used as it is: a reference it holds is not expanded again",
    ),
    ("${P}\\bin", {"P": "C:\\tmp"}, False, "C:\\tmp\\bin", "A value's backslashes are kept as they are"),
    ("}${", {}, False, "}${", "Braces and dollars that form no reference stay"),
    ("${ANTHROPIC_AUTH_TOKEN:-x}${A:-y}", {}, True, "y", "A blanked credential beside a default"),
)
VISIBLE_EXPANSIONS = EXPAND_BASIC + EXPAND_UNSET + EXPAND_EMPTY + EXPAND_CREDENTIALS + EXPAND_TABLE


def expect_expansions(host, cases) -> None:
    for text, env, remote, want, why in cases:
        got = learner_expand(host, text, env, remote)
        place = "a remote server's url/headers" if remote else "a value"
        expect(
            got == want,
            f"{why}: expanding {text!r} in {place} with env {env!r} must give {want!r}; yours gives {got!r}.",
        )


@checks.check(
    "expand_basic",
    points=2,
    title="${VAR} and ${VAR:-default} expand from the environment",
    mistake="mis-expands ${VAR}",
)
def expand_basic(host) -> None:
    expect_expansions(host, EXPAND_BASIC)


@checks.check(
    "expand_unset_stays_literal",
    points=1,
    title="an unset variable without a default stays as written, as Claude Code does (the exam guide: parsing fails)",
    mistake="drops unset variables",
)
def expand_unset_stays_literal(host) -> None:
    expect_expansions(host, EXPAND_UNSET)


@checks.check(
    "expand_empty_is_set",
    points=2,
    title="an empty string counts as set: ${VAR:-default} gives ''",
    mistake="applies defaults to empty strings",
)
def expand_empty_is_set(host) -> None:
    expect_expansions(host, EXPAND_EMPTY)


@checks.check(
    "expand_credentials_blank",
    points=2,
    title="credential variables read as empty in a remote url/headers",
    mistake="sends credentials to remote servers",
)
def expand_credentials_blank(host) -> None:
    expect_expansions(host, EXPAND_CREDENTIALS)


@checks.check(
    "expand_matches_reference",
    points=3,
    title="expand_value gives Claude Code's answer on a table of tricky values",
    mistake="mis-expands defaults, look-alike references or values that hold references",
)
def expand_matches_reference(host) -> None:
    expect_expansions(host, EXPAND_TABLE)


# --- part B: the resolver --------------------------------------------------------------------
# A case: (user, local, project, env, the servers Claude Code uses, why).


def _stdio(scope: str, command: str, args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"scope": scope, "type": "stdio", "command": command, "args": args, "env": env or {}}


def _remote(scope: str, kind: str, url: str, headers: dict[str, str] | None = None, **extra: str) -> dict[str, Any]:
    return {"scope": scope, "type": kind, "url": url, "headers": headers or {}, **extra}


_USER, _PROJECT, _LOCAL = ({"command": "npx", "args": [f"server-{s}"]} for s in ("user", "project", "local"))

RESOLVE_PRECEDENCE = (
    (
        {"db": _USER},
        {"db": _LOCAL},
        {"db": _PROJECT},
        {},
        {"db": _stdio("local", "npx", ["server-local"])},
        "The local definition wins over project and user",
    ),
    (
        {"db": _USER},
        {},
        {"db": _PROJECT},
        {},
        {"db": _stdio("project", "npx", ["server-project"])},
        "The project definition wins over user",
    ),
    (
        {"db": _USER, "notes": {"command": "notes"}},
        {},
        {"db": _PROJECT},
        {},
        {"db": _stdio("project", "npx", ["server-project"]), "notes": _stdio("user", "notes", [])},
        "Servers with other names are all kept",
    ),
    # The same rule for every name, whichever scopes hold it.
    (
        {"github": _USER, "notes": _USER, "tracker": _USER},
        {"notes": _LOCAL, "tracker": _LOCAL},
        {"github": _PROJECT, "tracker": _PROJECT, "search": _PROJECT},
        {},
        {
            "notes": _stdio("local", "npx", ["server-local"]),
            "tracker": _stdio("local", "npx", ["server-local"]),
            "github": _stdio("project", "npx", ["server-project"]),
            "search": _stdio("project", "npx", ["server-project"]),
        },
        "Each name is decided on its own: local, else project, else user",
    ),
)
RESOLVE_NO_MERGE = (
    (
        {
            "github": {
                "type": "http",
                "url": "https://api.githubcopilot.com/mcp",
                "headers": {"Authorization": "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}"},
            }
        },
        {"github": {"type": "http", "url": "https://ghe.example.com/mcp"}},
        {},
        {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x"},
        {"github": _remote("local", "http", "https://ghe.example.com/mcp")},
        "The user's headers must not leak into the local entry",
    ),
    (
        {"db": {"command": "npx", "args": ["pg"], "env": {"PGSSLMODE": "require"}}},
        {},
        {"db": {"command": "python", "args": ["db.py"]}},
        {},
        {"db": _stdio("project", "python", ["db.py"])},
        "The user's env must not be merged into the project entry",
    ),
)
RESOLVE_TYPES = (
    (
        {},
        {},
        {
            "plain": {"command": "npx", "args": ["-y", "x"]},
            "alias": {"type": "streamable-http", "url": "https://a.example.com/mcp"},
            "no-type": {"url": "https://b.example.com/mcp"},
            "sdk": {"type": "sdk"},
            "placeholder": {"type": "http", "url": ""},
            "expands-to-nothing": {"type": "sse", "url": "${EVENTS_URL:-}"},
        },
        {},
        {
            "plain": _stdio("project", "npx", ["-y", "x"]),
            "alias": _remote("project", "http", "https://a.example.com/mcp"),
            "placeholder": _remote("project", "http", "", status="not_configured"),
            "expands-to-nothing": _remote("project", "sse", ""),
        },
        (
            "Missing type means stdio; streamable-http means http; url without type and type sdk are skipped; "
            "a url written as the empty string is not configured (one that only expands to nothing is kept as it is)"
        ),
    ),
)
# A reference in every field Claude Code expands, of a stdio, an http and an sse server, in every scope.
FIELDS_CASE = (
    {
        "events": {
            "type": "sse",
            "url": "https://events.example.com/${TENANT}/sse?token=${NPM_TOKEN}",
            "headers": {"X-Team": "${TEAM:-core}"},
        }
    },
    {
        "notes": {
            "command": "${PYTHON}",
            "args": ["-m", "${NOTES_MODULE:-servers.notes}"],
            "env": {"NOTES_TOKEN": "${NPM_TOKEN}"},
        }
    },
    {
        "postgres-readonly": {
            "type": "stdio",
            "command": "${PG_COMMAND:-npx}",
            "args": ["-y", "${PG_PACKAGE}@latest", "${DATABASE_URL_RO}"],
            "env": {"PGSSLMODE": "${SSL:-require}", "KEY": "${ANTHROPIC_API_KEY}"},
        },
        "github": {
            "type": "http",
            "url": "${GH_URL:-https://api.githubcopilot.com}/mcp",
            "headers": {"Authorization": "Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}", "X-Leak": "${ANTHROPIC_API_KEY}"},
        },
    },
    {
        "PG_PACKAGE": "@modelcontextprotocol/server-postgres",
        "DATABASE_URL_RO": "postgres://ro@db/orders",
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x",
        "ANTHROPIC_API_KEY": "sk-ant",
        "TENANT": "acme",
        "NPM_TOKEN": "npm_x",
        "PYTHON": "python3",
    },
    {
        "notes": _stdio("local", "python3", ["-m", "servers.notes"], {"NOTES_TOKEN": "npm_x"}),
        "github": _remote(
            "project", "http", "https://api.githubcopilot.com/mcp", {"Authorization": "Bearer ghp_x", "X-Leak": ""}
        ),
        "postgres-readonly": _stdio(
            "project",
            "npx",
            ["-y", "@modelcontextprotocol/server-postgres@latest", "postgres://ro@db/orders"],
            {"PGSSLMODE": "require", "KEY": "sk-ant"},
        ),
        "events": _remote("user", "sse", "https://events.example.com/acme/sse?token=", {"X-Team": "core"}),
    },
    "Every field of every scope's winner is expanded",
)
# Several rules at once.
RESOLVE_TABLE = (
    (
        {},
        {},
        {"db": {"type": "stdio", "command": "${CMD:-npx}", "args": ["${PART}"], "env": {"K": "${NPM_TOKEN}"}}},
        {"CMD": "", "PART": "${TOKEN}", "NPM_TOKEN": "npm_x"},
        {"db": _stdio("project", "", ["${TOKEN}"], {"K": "npm_x"})},
        "An empty command is a value, a value holding a reference is used as it is, and a credential expands in a stdio server's env",
    ),
    (
        {},
        {},
        {
            "events": {
                "type": "sse",
                "url": "${BASE:-https://b.example}/sse?key=${NPM_TOKEN}",
                "headers": {"X-Team": "${TEAM:-core}", "Authorization": "Bearer ${ANTHROPIC_AUTH_TOKEN:-anon}"},
            }
        },
        {"NPM_TOKEN": "npm_x"},
        {
            "events": _remote(
                "project", "sse", "https://b.example/sse?key=", {"X-Team": "core", "Authorization": "Bearer "}
            )
        },
        "An sse server's url and headers are remote fields: credentials read as empty there, defaults apply to the rest",
    ),
    (
        {},
        {},
        {"a": {"type": "http", "url": "${URLV}"}, "b": {"type": "http", "url": "", "headers": {"X": "${T:-t}"}}},
        {"URLV": ""},
        {"a": _remote("project", "http", ""), "b": _remote("project", "http", "", {"X": "t"}, status="not_configured")},
        "Only a url written as the empty string is not configured; its headers still expand",
    ),
    (
        {},
        {"github": {"command": "npx"}},
        {"github": {"type": "http", "url": "https://a.example/mcp", "headers": {"Authorization": "x"}}},
        {},
        {"github": _stdio("local", "npx", [])},
        "A local stdio entry replaces a project http entry of the same name whole",
    ),
    (
        {"tracker": {"type": "http", "url": "https://t.example/mcp"}},
        {"tracker": {"type": "http", "url": ""}},
        {},
        {},
        {"tracker": _remote("local", "http", "", status="not_configured")},
        "A local placeholder with an empty url still wins over the user's entry",
    ),
    (
        {"u": {"type": "streamable-http", "url": "https://u.example/mcp"}},
        {"l": {"type": "sse", "url": "https://l.example/sse"}},
        {"p": {"command": "python", "args": ["-m", "x"]}},
        {},
        {
            "l": _remote("local", "sse", "https://l.example/sse"),
            "p": _stdio("project", "python", ["-m", "x"]),
            "u": _remote("user", "http", "https://u.example/mcp"),
        },
        "Servers of every scope and transport are all kept",
    ),
)
VISIBLE_RESOLUTIONS = RESOLVE_PRECEDENCE + RESOLVE_NO_MERGE + RESOLVE_TYPES + (FIELDS_CASE,) + RESOLVE_TABLE


def expect_resolutions(host, cases) -> None:
    for user, local, project, env, want, why in cases:
        got = learner_resolve(host, user, local, project, env)
        if got != want:
            raise CheckFailed(
                f"{why}. With user={user!r}, local={local!r}, project={project!r}, env={env!r} "
                f"the servers must be {want!r}; yours are {got!r}."
            )


@checks.check(
    "resolve_precedence",
    points=2,
    title="local beats project beats user, by name",
    mistake="gets scope precedence wrong",
)
def resolve_precedence(host) -> None:
    expect_resolutions(host, RESOLVE_PRECEDENCE)


@checks.check(
    "resolve_no_field_merge",
    points=2,
    title="the winning entry is used whole; fields are never merged",
    mistake="merges fields across scopes",
)
def resolve_no_field_merge(host) -> None:
    expect_resolutions(host, RESOLVE_NO_MERGE)


@checks.check(
    "resolve_types_and_skips",
    points=2,
    title="type defaults, aliases and skipped entries follow Claude Code",
    mistake="loads entries Claude Code skips",
)
def resolve_types_and_skips(host) -> None:
    expect_resolutions(host, RESOLVE_TYPES)


@checks.check(
    "resolve_expands_fields",
    points=2,
    title="the winner's command, args, env, url and headers are expanded",
    mistake="mis-expands ${VAR}",
)
def resolve_expands_fields(host) -> None:
    user, local, project, env, want, _ = FIELDS_CASE
    got = learner_resolve(host, user, local, project, env)
    for name, server in want.items():
        mine = got.get(name)
        expect(
            isinstance(mine, dict),
            f"The {server['scope']} server {name!r} is missing from your servers ({sorted(got)}).",
        )
        for field, value in server.items():
            remote = server["type"] != "stdio" and field in ("url", "headers")
            toward = (
                "toward a remote server, where credential variables read as empty"
                if remote
                else "where every variable expands"
            )
            expect(
                mine.get(field) == value,
                f"With env={env!r}, the {field} of the {server['type']} server {name!r} ({server['scope']} scope) must be {value!r}, "
                f"{toward}; yours is {mine.get(field)!r}.",
            )
    expect(sorted(got) == sorted(want), f"The servers must be {sorted(want)}; yours are {sorted(got)}.")


@checks.check(
    "resolve_matches_reference",
    points=3,
    title="resolve_servers gives Claude Code's answer on a table of configurations that combine the rules",
    mistake="mis-resolves configurations that combine several rules",
)
def resolve_matches_reference(host) -> None:
    expect_resolutions(host, RESOLVE_TABLE)


# --- part C: the authored configuration --------------------------------------------------------

SECRET_LOOKING = re.compile(r"(ghp_|gho_|sk-|xox[abp]-|trk_live_|dsk_live_|AKIA)[A-Za-z0-9_\-]{4,}|\b[0-9a-f]{32,}\b")


def authored(host) -> dict[str, dict[str, Any]]:
    return structured(host.call("authored_config"))


def servers_in(config: dict[str, Any], what: str) -> dict[str, Any]:
    servers = config.get("mcpServers", config)
    expect(isinstance(servers, dict), f"{what} must map server names to entries.")
    return servers


def scopes_of(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The server maps of the three scopes, by the name the learner wrote them under."""
    return {
        "PROJECT_MCP_JSON": servers_in(config["PROJECT_MCP_JSON"], "PROJECT_MCP_JSON"),
        "USER_SERVERS": servers_in(config["USER_SERVERS"], "USER_SERVERS"),
        "LOCAL_SERVERS": servers_in(config["LOCAL_SERVERS"], "LOCAL_SERVERS"),
    }


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


@checks.check(
    "config_scopes",
    points=2,
    title="each scenario server sits in the right scope",
    mistake="puts servers in the wrong scope",
)
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
        expect(
            where == [scope], f"{what} belongs in {scope} scope only; yours is in: {', '.join(where) or 'no scope'}."
        )


@checks.check(
    "config_no_secret_committed",
    points=2,
    title="the committed .mcp.json holds no secret",
    mistake="commits secrets in .mcp.json",
)
def config_no_secret_committed(host) -> None:
    project = authored(host)["PROJECT_MCP_JSON"]
    for token in (SCENARIO["my_tracker_token"], SCENARIO["experiment_token"]):
        expect(
            not any(token in s for s in strings(project)),
            "A real token is written in PROJECT_MCP_JSON, which is committed to git; reference it with ${VAR} instead.",
        )
    leaked = [s for s in strings(project) if SECRET_LOOKING.search(s)]
    expect(
        not leaked,
        f"PROJECT_MCP_JSON holds a value that looks like a secret ({len(leaked)} of them); keep secrets in the environment.",
    )
    user = authored(host)["USER_SERVERS"]
    expect(
        not any(SCENARIO["experiment_token"] in s for s in strings(user)),
        "The experimental token belongs to this project only (local scope), not to every project (user scope).",
    )


@checks.check(
    "config_placeholders",
    points=2,
    title="placeholders reference the right variables, with defaults where needed",
    mistake="misses placeholder defaults",
)
def config_placeholders(host) -> None:
    config = authored(host)
    project = servers_in(config["PROJECT_MCP_JSON"], "PROJECT_MCP_JSON")
    trackers = find_server(project, is_tracker)
    expect(trackers, "The tracker is missing from PROJECT_MCP_JSON.")
    tracker = project[trackers[0]]
    expect(
        tracker.get("type") in ("http", "streamable-http"),
        'The tracker is a remote server: its entry needs "type": "http" (a url without a type is skipped).',
    )
    auth = (tracker.get("headers") or {}).get("Authorization", "")
    variable = SCENARIO["tracker_token_variable"]
    expect(
        re.fullmatch(r"Bearer \$\{" + re.escape(variable) + r"(:-)?\}", auth) is not None,
        f"The tracker's Authorization header must be 'Bearer ${{{variable}}}', each developer's own token; yours is {auth!r}.",
    )
    for scope in ("PROJECT_MCP_JSON", "USER_SERVERS", "LOCAL_SERVERS"):
        for text in strings(config[scope]):
            for match in re.finditer(r"\$\{CLAUDE_PROJECT_DIR(:-[^}]*)?\}", text):
                expect(
                    match.group(1) is not None,
                    f"${{CLAUDE_PROJECT_DIR}} in {scope} needs a default such as ${{CLAUDE_PROJECT_DIR:-.}}: it is set in the server's environment, not Claude Code's.",
                )
    desks = find_server(project, is_team_desk)
    expect(desks, "The team's desk server is missing from PROJECT_MCP_JSON.")
    expect(
        any("${CLAUDE_PROJECT_DIR:-" in s for s in strings(project[desks[0]].get("args") or [])),
        "Reference the team's desk script relative to the project root with ${CLAUDE_PROJECT_DIR:-.}, so it works wherever the repository is cloned.",
    )


# What the scenario's stdio servers run: a module (python -m) or the team's script, from the project root.
STARTABLE_MODULES = (SCENARIO["notes_module"], "servers.support_desk")
STARTABLE_SCRIPTS = (SCENARIO["team_server_script"],)
# References as Claude Code expands them when the variable is unset, as every one in a stdio server of the
# scenario is (CLAUDE_PROJECT_DIR included): a default applies, a reference without one stays as written.
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def with_defaults(text: str) -> str:
    return REFERENCE.sub(lambda m: m.group(0) if m.group(2) is None else m.group(2), text)


def is_stdio(entry: dict[str, Any]) -> bool:
    """A stdio entry as Claude Code reads it: type stdio, or no type and no url (a url without a type is skipped)."""
    return entry.get("type") == "stdio" or ("type" not in entry and "url" not in entry)


def launch_problem(name: str, entry: dict[str, Any]) -> str | None:
    """Why the stdio server ``name`` as written could not start the scenario's server, or None."""
    command = entry.get("command")
    if not isinstance(command, str):
        return f"Server {name!r}: its command must be a string; yours is {command!r}."
    if not posixpath.basename(with_defaults(command).strip()).startswith("python"):
        return f"Server {name!r}: the scenario's servers are started with python; yours runs {command!r}."
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return f"Server {name!r}: args must be a list of strings; yours is {args!r}."
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        return f"Server {name!r}: env must map names to strings; yours is {env!r}."
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
        rest.pop(0)  # an option of python's own, such as -u
    if not rest:
        return f"Server {name!r}: python is given no script or module to run (args {args!r})."
    if rest[0] == "-c":
        return f"Server {name!r}: python -c runs code written on the command line, not the scenario's server."
    if rest[0] == "-m":
        module = rest[1] if len(rest) > 1 else ""
        if module.removesuffix(".__main__") not in STARTABLE_MODULES:
            return f"Server {name!r}: python -m {module!r} is not a module of the scenario; they are {', '.join(STARTABLE_MODULES)}."
        return None
    script = with_defaults(rest[0])
    if "${" in script:
        return (
            f"Server {name!r}: its script {rest[0]!r} keeps an unset reference without a default, as Claude Code leaves it, "
            "so python finds no such file."
        )
    if posixpath.isabs(script):
        return f"Server {name!r}: the absolute path {rest[0]!r} exists on one machine only; reference the script from the project root."
    if posixpath.normpath(script) not in STARTABLE_SCRIPTS:
        return f"Server {name!r}: python runs {rest[0]!r}, which is not the scenario's script ({', '.join(STARTABLE_SCRIPTS)} in the project root)."
    return None


@checks.check(
    "config_servers_start",
    points=3,
    title="every stdio server is written so that it starts: python with the scenario's script or module",
    mistake="writes configurations that do not start",
)
def config_servers_start(host) -> None:
    stdio = {
        (scope, name): entry
        for scope, servers in scopes_of(authored(host)).items()
        for name, entry in servers.items()
        if isinstance(entry, dict) and is_stdio(entry)
    }
    expect(
        len(stdio) >= 3,
        f"The scenario has three stdio servers (team desk, notes, experimental desk); your configuration has {len(stdio)}.",
    )
    for (_, name), entry in stdio.items():
        problem = launch_problem(name, entry)
        expect(problem is None, problem or "")
