"""``${VAR}`` expansion in MCP server entries (Claude Code docs, MCP › Environment variable expansion in `.mcp.json`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.expansion import (
    CREDENTIAL_VARIABLES,
    EXPANDED_FIELDS,
    PLUGIN_FIELDS,
    REFERENCE,
    Expanded,
    display,
    expand_entry,
    expand_text,
    plugin_variables,
    references,
)

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
ENVS = st.dictionaries(NAMES, st.text(max_size=20), max_size=5)


# --- expand_text -------------------------------------------------------------------------


def test_a_set_variable_is_substituted() -> None:
    assert expand_text("Bearer ${TOKEN}", {"TOKEN": "abc"}) == "Bearer abc"


def test_an_unset_variable_without_default_stays_literal_and_is_reported_once() -> None:
    found = Expanded({})

    text = expand_text("${TOKEN}:${TOKEN}/${OTHER}", {}, found=found)

    assert text == "${TOKEN}:${TOKEN}/${OTHER}"
    assert found.missing == ["TOKEN", "OTHER"]


def test_an_unset_variable_with_default_takes_the_default_and_is_not_missing() -> None:
    found = Expanded({})

    assert expand_text("${API_BASE_URL:-https://api.example.com}/mcp", {}, found=found) == "https://api.example.com/mcp"
    assert found.missing == []


def test_a_variable_set_to_the_empty_string_counts_as_set_and_ignores_its_default() -> None:
    # Claude Code docs, MCP › Variables set to an empty string: API_BASE_URL="" turns the example url into /mcp.
    assert expand_text("${API_BASE_URL:-https://api.example.com}/mcp", {"API_BASE_URL": ""}) == "/mcp"


def test_an_empty_default_gives_the_empty_string() -> None:
    assert expand_text("a${X:-}b", {}) == "ab"


def test_several_references_in_one_string_all_expand() -> None:
    env = {"SCHEME": "https", "HOST": "mcp.example.com"}

    assert expand_text("${SCHEME}://${HOST}:${PORT:-8443}/mcp", env) == "https://mcp.example.com:8443/mcp"


def test_a_dollar_name_without_braces_is_left_alone() -> None:
    found = Expanded({})

    assert expand_text("$TOKEN and $HOME", {"TOKEN": "abc", "HOME": "/root"}, found=found) == "$TOKEN and $HOME"
    assert found.missing == []


@pytest.mark.parametrize(
    "text",
    [
        "${VAR-d}",
        "${VAR:=d}",
        "${VAR:+x}",
        "$VAR",
        "${1}",
        "${9X}",
        "${A.B}",
        "${ VAR }",
        "${SET-VAR}",
        "${}",
        "${",
        "${VAR",
        "$",
    ],
)
@pytest.mark.parametrize("env", [{}, {"VAR": "value", "A": "a", "SET": "s"}], ids=["unset", "set"])
def test_other_shell_syntax_stays_literal_without_a_missing_warning(text: str, env: dict) -> None:
    # Conformance record rule 15: only ${NAME} and ${NAME:-default} are recognised.
    found = Expanded({})

    assert expand_text(text, env, found=found) == text
    assert found.missing == []


def test_a_lower_case_name_is_a_valid_reference() -> None:
    found = Expanded({})

    assert expand_text("${lower_case}", {}, found=found) == "${lower_case}"
    assert found.missing == ["lower_case"]
    assert expand_text("${lower_case}", {"lower_case": "v"}) == "v"


@pytest.mark.parametrize(
    "written,expanded",
    [
        ("${UNSET:-${OTHER}}", "${OTHER}"),
        ("${UNSET:-$OTHER}", "$OTHER"),
        ("${UNSET:-a}b}", "ab}"),
        ("${UNSET:-a}}", "a}"),
        ("${UNSET:-{x}}", "{x}"),
        ("${UNSET:-{}", "{"),
        ("${UNSET:-def:-x}", "def:-x"),
        ("${UNSET:-a b}", "a b"),
    ],
)
def test_a_default_is_literal_text_up_to_the_first_closing_brace(written: str, expanded: str) -> None:
    found = Expanded({})

    assert expand_text(written, {"OTHER": "oth"}, found=found) == expanded
    assert found.missing == []  # ${OTHER inside a default is text, not a reference


def test_there_is_no_escape_syntax() -> None:
    env = {"SETVAR": "hello"}

    assert expand_text("$${SETVAR}", env) == "$hello"
    assert expand_text("\\${SETVAR}", env) == "\\hello"


def test_expansion_is_one_pass_so_a_value_holding_a_reference_is_not_expanded_again() -> None:
    found = Expanded({})

    assert expand_text("${A}", {"A": "${B}", "B": "b"}, found=found) == "${B}"
    assert found.missing == []


def test_credential_variables_read_as_empty_toward_a_remote_server_and_are_recorded() -> None:
    found = Expanded({})

    text = expand_text(
        "Bearer ${ANTHROPIC_API_KEY:-fallback}",
        {"ANTHROPIC_API_KEY": "sk-ant-secret"},
        blank_credentials=True,
        found=found,
    )

    assert text == "Bearer "
    assert found.blanked == ["ANTHROPIC_API_KEY"]
    assert found.missing == []


def test_credential_variables_expand_normally_when_not_blanking() -> None:
    assert expand_text("${ANTHROPIC_API_KEY}", {"ANTHROPIC_API_KEY": "sk-ant-1"}) == "sk-ant-1"


def test_the_credential_names_the_docs_give_are_all_covered() -> None:
    # Claude Code docs, MCP › Environment variable expansion in `.mcp.json` names these; the provider base URL is deliberately not one of them.
    named = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "HTTPS_PROXY", "NPM_TOKEN"}
    assert named <= CREDENTIAL_VARIABLES
    assert "ANTHROPIC_BASE_URL" not in CREDENTIAL_VARIABLES
    assert "API_KEY" not in CREDENTIAL_VARIABLES


@given(st.text().filter(lambda s: "${" not in s), ENVS, st.booleans())
def test_text_without_a_reference_is_unchanged_whatever_the_environment(text: str, env: dict, blank: bool) -> None:
    found = Expanded({})

    assert expand_text(text, env, blank_credentials=blank, found=found) == text
    assert found.missing == [] and found.blanked == []


PLAIN = st.text(alphabet=st.characters(blacklist_characters="${}"), max_size=8)
REFERENCE_TEXT = st.lists(
    st.one_of(PLAIN, NAMES.map(lambda n: f"${{{n}}}"), st.tuples(NAMES, PLAIN).map(lambda p: f"${{{p[0]}:-{p[1]}}}")),
    max_size=6,
).map("".join)


@given(REFERENCE_TEXT, st.dictionaries(NAMES, PLAIN, max_size=5))
def test_expanding_twice_changes_nothing_when_values_and_defaults_hold_no_references(text: str, env: dict) -> None:
    once = expand_text(text, env)

    # Only unset references without a default survive, and they survive again unchanged.
    assert expand_text(once, env) == once


@given(
    st.sampled_from(sorted(CREDENTIAL_VARIABLES)),
    ENVS,
    st.text(alphabet=st.characters(blacklist_characters="}"), max_size=10),
)
def test_credential_names_are_always_blank_in_remote_fields_whatever_env_says(
    name: str, env: dict, default: str
) -> None:
    env = {**env, name: "leaked-secret-value"}
    entry = {
        "type": "http",
        "url": f"https://mcp.example.com/${{{name}}}",
        "headers": {"X-Key": f"${{{name}:-{default}}}"},
    }

    result = expand_entry(entry, env, remote=True)

    assert result.entry["url"] == "https://mcp.example.com/"
    assert result.entry["headers"] == {"X-Key": ""}
    assert result.blanked == [name]
    assert result.missing == []


# --- expand_entry ------------------------------------------------------------------------


def test_the_provider_base_url_still_expands_in_a_remote_url() -> None:
    result = expand_entry(
        {"type": "http", "url": "${ANTHROPIC_BASE_URL}/mcp"},
        {"ANTHROPIC_BASE_URL": "https://gateway.example.com"},
        remote=True,
    )

    assert result.entry["url"] == "https://gateway.example.com/mcp"
    assert result.blanked == []


def test_a_provider_base_url_carrying_a_password_never_reaches_the_remote_server() -> None:
    # Claude Code docs, MCP › Environment variable expansion in `.mcp.json`: "${ANTHROPIC_BASE_URL}/mcp"
    # works "unless the URL value itself contains credentials, such as a user name and password".
    result = expand_entry(
        {"type": "http", "url": "${ANTHROPIC_BASE_URL}/mcp"},
        {"ANTHROPIC_BASE_URL": "https://user:hunter2@gateway.example.com"},
        remote=True,
    )

    assert result.entry["url"] == "/mcp"
    assert result.blanked == ["ANTHROPIC_BASE_URL"]


@pytest.mark.parametrize(
    "name",
    ["ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_FOUNDRY_BASE_URL"],
)
@pytest.mark.parametrize(
    "value,reaches",
    [
        ("http://127.0.0.1:9", True),
        ("https://gateway.example.com/v1", True),
        ("http://user:pass@127.0.0.1:9", False),
        ("https://token@gateway.example.com", False),
    ],
    ids=["plain", "path", "user-and-password", "user-only"],
)
def test_a_provider_base_url_reaches_a_remote_server_unless_it_carries_userinfo(
    name: str, value: str, reaches: bool
) -> None:
    result = expand_entry({"type": "http", "url": f"${{{name}}}/mcp"}, {name: value}, remote=True)

    assert result.entry["url"] == (f"{value}/mcp" if reaches else "/mcp")
    assert result.blanked == ([] if reaches else [name])


def test_a_provider_base_url_with_userinfo_still_expands_for_a_stdio_server() -> None:
    value = "http://user:pass@127.0.0.1:9"

    result = expand_entry(
        {"command": "run", "args": ["${ANTHROPIC_BASE_URL}"]}, {"ANTHROPIC_BASE_URL": value}, remote=False
    )

    assert result.entry["args"] == [value]


def test_a_non_credential_name_expands_in_remote_headers() -> None:
    result = expand_entry(
        {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
        {"API_KEY": "k-123"},
        remote=True,
    )

    assert result.entry["headers"] == {"Authorization": "Bearer k-123"}


def test_the_docs_example_entry_expands_url_and_header() -> None:
    entry = {
        "type": "http",
        "url": "${API_BASE_URL:-https://api.example.com}/mcp",
        "headers": {"Authorization": "Bearer ${API_KEY}"},
    }

    result = expand_entry(entry, {"API_KEY": "k"}, remote=True)

    assert result.entry == {
        "type": "http",
        "url": "https://api.example.com/mcp",
        "headers": {"Authorization": "Bearer k"},
    }


def test_expand_entry_touches_only_command_args_env_values_url_and_header_values() -> None:
    env = {"V": "x"}
    entry = {
        "type": "${V}",
        "command": "${V}/bin",
        "args": ["--a", "${V}"],
        "env": {"${V}_KEY": "${V}"},
        "headersHelper": "${V}/helper",
        "timeout": "${V}",
    }

    result = expand_entry(entry, env, remote=False)

    assert result.entry == {
        "type": "${V}",
        "command": "x/bin",
        "args": ["--a", "x"],
        "env": {"${V}_KEY": "x"},
        "headersHelper": "${V}/helper",
        "timeout": "${V}",
    }
    assert entry["command"] == "${V}/bin"  # the written entry is not modified


def test_expand_entry_expands_remote_url_and_header_values_but_not_header_names() -> None:
    result = expand_entry(
        {"type": "sse", "url": "https://${HOST}/sse", "headers": {"X-${V}": "${V}"}},
        {"HOST": "h.example", "V": "v"},
        remote=True,
    )

    assert result.entry["url"] == "https://h.example/sse"
    assert result.entry["headers"] == {"X-${V}": "v"}


def test_a_stdio_server_keeps_credential_values_in_its_environment() -> None:
    result = expand_entry(
        {"command": "run", "args": ["${ANTHROPIC_API_KEY}"], "env": {"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"}},
        {"ANTHROPIC_API_KEY": "sk-ant-local"},
        remote=False,
    )

    assert result.entry["env"] == {"ANTHROPIC_API_KEY": "sk-ant-local"}
    assert result.entry["args"] == ["sk-ant-local"]
    assert result.blanked == []


def remote_header(name: str, env: dict) -> Expanded:
    """A remote entry that sends ``${name}`` (and its ``:-default`` form) in a url and two headers."""
    entry = {
        "type": "http",
        "url": f"https://h.example.com/mcp?k=${{{name}}}",
        "headers": {"X-Value": f"v=${{{name}}}", "X-Default": f"d=${{{name}:-dflt}}"},
    }
    return expand_entry(entry, env, remote=True)


@pytest.mark.parametrize(
    "name",
    [
        "anthropic_api_key",
        "Anthropic_Auth_Token",
        "https_proxy",
        "INPUT_ANTHROPIC_API_KEY",
        "INPUT_NPM_TOKEN",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_12",
        "GIT_CONFIG_PARAMETERS",
        "CARGO_REGISTRIES_FOO_TOKEN",
        "BUNDLE_GEMS__EXAMPLE__COM",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "CLAUDE_CODE_MEMORY_API_BASE_URL",
        "MCP_CLIENT_SECRET",
        "PIP_INDEX_URL",
        "GOPROXY",
        "VAULT_TOKEN",
        "SLACK_WEBHOOK_URL",
        "NODE_AUTH_TOKEN",
        "ANTHROPIC_CUSTOM_HEADERS",
        "AWS_SECRET_ACCESS_KEY",
    ],
)
@pytest.mark.parametrize("is_set", [True, False], ids=["set", "unset"])
def test_credential_names_any_case_input_prefixed_or_by_pattern_read_as_empty_toward_a_remote_server(
    name: str, is_set: bool
) -> None:
    # Conformance record section 5, "BLANK" list, and rule 18 (case-insensitive, set or not).
    result = remote_header(name, {name: f"val-{name}"} if is_set else {})

    assert result.entry["url"] == "https://h.example.com/mcp?k="
    assert result.entry["headers"] == {"X-Value": "v=", "X-Default": "d="}
    assert result.missing == []


@pytest.mark.parametrize(
    "name",
    ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "API_KEY", "MY_SECRET_TOKEN",
     "DB_PASSWORD", "AWS_ACCESS_KEY_ID", "INPUT_HF_TOKEN", "INPUT_API_KEY"],
)  # fmt: skip
def test_names_outside_the_credential_set_expand_toward_a_remote_server(name: str) -> None:
    # Conformance record section 5, "EXPANDED" list; Claude Code docs, MCP › Environment variable expansion in `.mcp.json` (API_KEY).
    result = remote_header(name, {name: "v1"})

    assert result.entry["url"] == "https://h.example.com/mcp?k=v1"
    assert result.entry["headers"] == {"X-Value": "v=v1", "X-Default": "d=v1"}
    assert result.blanked == []


@pytest.mark.parametrize(
    "name",
    ["CLAUDE_CODE_OAUTH_TOKEN", "claude_code_oauth_token", "MCP_CLIENT_SECRET", "OTEL_EXPORTER_OTLP_HEADERS",
     "OTEL_ANYTHING", "CLAUDE_CODE_MEMORY_API_BASE_URL", "CLAUDE_CODE_OAUTH_REFRESH_TOKEN", "INPUT_CLAUDE_CODE_OAUTH_TOKEN"],
)  # fmt: skip
def test_claude_codes_own_session_secrets_read_as_empty_in_stdio_command_args_and_env_when_set(name: str) -> None:
    # Conformance record rule 19: only this small set is blanked outside remote url/headers.
    entry = {"command": f"/bin/${{{name}}}run", "args": [f"--t=${{{name}:-dflt}}"], "env": {"T": f"${{{name}}}"}}

    result = expand_entry(entry, {name: "session-secret"}, remote=False)

    assert result.entry == {"command": "/bin/run", "args": ["--t="], "env": {"T": ""}}
    assert result.missing == []
    assert result.blanked == [name]


@pytest.mark.parametrize("name", ["CLAUDE_CODE_OAUTH_TOKEN", "MCP_CLIENT_SECRET", "OTEL_EXPORTER_OTLP_HEADERS"])
def test_an_unset_session_secret_behaves_like_any_unset_name_in_stdio(name: str) -> None:
    entry = {"command": "run", "args": [f"${{{name}:-dflt}}", f"${{{name}}}"]}

    result = expand_entry(entry, {}, remote=False)

    assert result.entry["args"] == ["dflt", f"${{{name}}}"]
    assert result.missing == [name]
    assert result.blanked == []


@pytest.mark.parametrize(
    "name",
    ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN",
     "HTTPS_PROXY", "https_proxy", "PIP_INDEX_URL", "GIT_CONFIG_KEY_0", "CARGO_REGISTRIES_FOO_TOKEN"],
)  # fmt: skip
def test_other_credentials_expand_normally_in_a_stdio_server(name: str) -> None:
    entry = {"command": "run", "args": [f"${{{name}}}", f"${{{name}:-dflt}}"], "env": {"V": f"${{{name}}}"}}

    result = expand_entry(entry, {name: f"val-{name}"}, remote=False)

    assert result.entry["args"] == [f"val-{name}", f"val-{name}"]
    assert result.entry["env"] == {"V": f"val-{name}"}
    assert result.blanked == []


def test_a_remote_server_blanks_credentials_only_in_url_and_headers() -> None:
    # A remote entry's command/env (if any) are not sent to the server, so they are not blanked.
    result = expand_entry(
        {"type": "http", "url": "https://h/${NPM_TOKEN}", "env": {"T": "${NPM_TOKEN}"}},
        {"NPM_TOKEN": "npm-secret"},
        remote=True,
    )

    assert result.entry["url"] == "https://h/"
    assert result.entry["env"] == {"T": "npm-secret"}


def test_non_string_items_are_left_alone() -> None:
    entry = {"command": "run", "args": ["${V}", 8080, None, True], "env": {"PORT": 8080, "A": "${V}"}}

    result = expand_entry(entry, {"V": "v"}, remote=False)

    assert result.entry["args"] == ["v", 8080, None, True]
    assert result.entry["env"] == {"PORT": 8080, "A": "v"}


def test_missing_variables_are_collected_once_across_fields() -> None:
    result = expand_entry(
        {"type": "http", "url": "https://h/${TENANT}", "headers": {"A": "${TOKEN}", "B": "${TENANT}"}}, {}, remote=True
    )

    assert result.missing == ["TENANT", "TOKEN"]


def test_plugin_fields_add_headers_helper_to_the_expanded_fields() -> None:
    assert PLUGIN_FIELDS == (*EXPANDED_FIELDS, "headersHelper")
    assert set(EXPANDED_FIELDS) == {"command", "args", "env", "url", "headers"}

    result = expand_entry(
        {"type": "http", "url": "https://h/mcp", "headersHelper": "${CLAUDE_PLUGIN_ROOT}/bin/token"},
        plugin_variables("/plugins/p", "/data/p", "/proj"),
        remote=True,
        fields=PLUGIN_FIELDS,
    )

    assert result.entry["headersHelper"] == "/plugins/p/bin/token"


def test_plugin_variables_map_the_three_placeholders() -> None:
    assert plugin_variables("/root", "/data", "/proj") == {
        "CLAUDE_PLUGIN_ROOT": "/root",
        "CLAUDE_PLUGIN_DATA": "/data",
        "CLAUDE_PROJECT_DIR": "/proj",
    }


# --- display -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written,shown",
    [
        ("${SETVAR}", "${SETVAR}"),
        ("${SETVAR:-def}", "${SETVAR}"),
        ("${A:-https://x.example.com}/mcp", "${A}/mcp"),
        ("${UNSET:-}", "${UNSET}"),
        ("${UNSET:-${OTHER}}", "${UNSET}}"),
        ("${UNSET:-a}b}", "${UNSET}b}"),
        ("${UNSET:-def:-x}", "${UNSET}"),
        ("Bearer ${TOKEN:-anon} ${TOKEN}", "Bearer ${TOKEN} ${TOKEN}"),
        ("$${SETVAR}", "$${SETVAR}"),
        ("$SETVAR", "$SETVAR"),
        ("${UNSET-def}", "${UNSET-def}"),
        ("${1}", "${1}"),
        ("no references", "no references"),
    ],
)
def test_display_shows_every_reference_by_name_with_its_default_dropped(written: str, shown: str) -> None:
    # Conformance record section 4, column "shown by list/get".
    assert display(written) == shown


@given(REFERENCE_TEXT)
def test_display_keeps_every_name_in_order_and_leaves_no_default(text: str) -> None:
    shown = display(text)

    assert references(shown) == references(text)
    assert all(match.group(2) is None for match in REFERENCE.finditer(shown))
    assert display(shown) == shown


# --- references --------------------------------------------------------------------------


def test_references_finds_names_in_strings_lists_and_mapping_values_only() -> None:
    value = {"${KEY_NAME}": ["${A}", {"x": "${B:-d} ${C}"}, 3], "y": None, "z": "$NOT_BRACED"}

    assert references(value) == ["A", "B", "C"]
    assert references("no refs") == []
    assert references(42) == []
