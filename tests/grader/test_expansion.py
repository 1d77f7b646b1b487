"""``${VAR}`` expansion in MCP server entries (shared/seeds/004_16e38cc9560e0e5c.txt lines 778-840)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from grader.expansion import (
    CREDENTIAL_VARIABLES,
    EXPANDED_FIELDS,
    PLUGIN_FIELDS,
    Expanded,
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
    # Seed lines 807-810: API_BASE_URL="" turns the example url into /mcp.
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


def test_credential_variables_read_as_empty_toward_a_remote_server_and_are_recorded() -> None:
    found = Expanded({})

    text = expand_text(
        "Bearer ${ANTHROPIC_API_KEY:-fallback}", {"ANTHROPIC_API_KEY": "sk-ant-secret"}, blank_credentials=True, found=found
    )

    assert text == "Bearer "
    assert found.blanked == ["ANTHROPIC_API_KEY"]
    assert found.missing == []


def test_credential_variables_expand_normally_when_not_blanking() -> None:
    assert expand_text("${ANTHROPIC_API_KEY}", {"ANTHROPIC_API_KEY": "sk-ant-1"}) == "sk-ant-1"


def test_the_seed_credential_names_are_all_covered() -> None:
    # Seed lines 815-819 name these; the provider base URL is deliberately not one of them.
    seed = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "HTTPS_PROXY", "NPM_TOKEN"}
    assert seed <= CREDENTIAL_VARIABLES
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


@given(st.sampled_from(sorted(CREDENTIAL_VARIABLES)), ENVS, st.text(alphabet=st.characters(blacklist_characters="}"), max_size=10))
def test_credential_names_are_always_blank_in_remote_fields_whatever_env_says(name: str, env: dict, default: str) -> None:
    env = {**env, name: "leaked-secret-value"}
    entry = {"type": "http", "url": f"https://mcp.example.com/${{{name}}}", "headers": {"X-Key": f"${{{name}:-{default}}}"}}

    result = expand_entry(entry, env, remote=True)

    assert result.entry["url"] == "https://mcp.example.com/"
    assert result.entry["headers"] == {"X-Key": ""}
    assert result.blanked == [name]
    assert result.missing == []


# --- expand_entry ------------------------------------------------------------------------


def test_the_provider_base_url_still_expands_in_a_remote_url() -> None:
    result = expand_entry(
        {"type": "http", "url": "${ANTHROPIC_BASE_URL}/mcp"}, {"ANTHROPIC_BASE_URL": "https://gateway.example.com"}, remote=True
    )

    assert result.entry["url"] == "https://gateway.example.com/mcp"
    assert result.blanked == []


def test_a_provider_base_url_carrying_a_password_never_reaches_the_remote_server() -> None:
    # Seed line 821: "${ANTHROPIC_BASE_URL}/mcp" works "если только само значение URL не
    # содержит учётные данные, например имя пользователя и пароль".
    result = expand_entry(
        {"type": "http", "url": "${ANTHROPIC_BASE_URL}/mcp"},
        {"ANTHROPIC_BASE_URL": "https://user:hunter2@gateway.example.com"},
        remote=True,
    )

    assert "hunter2" not in result.entry["url"]


def test_a_non_credential_name_expands_in_remote_headers() -> None:
    result = expand_entry(
        {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
        {"API_KEY": "k-123"},
        remote=True,
    )

    assert result.entry["headers"] == {"Authorization": "Bearer k-123"}


def test_the_seed_example_entry_expands_url_and_header() -> None:
    entry = {
        "type": "http",
        "url": "${API_BASE_URL:-https://api.example.com}/mcp",
        "headers": {"Authorization": "Bearer ${API_KEY}"},
    }

    result = expand_entry(entry, {"API_KEY": "k"}, remote=True)

    assert result.entry == {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer k"}}


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
        {"type": "sse", "url": "https://${HOST}/sse", "headers": {"X-${V}": "${V}"}}, {"HOST": "h.example", "V": "v"}, remote=True
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


# --- references --------------------------------------------------------------------------


def test_references_finds_names_in_strings_lists_and_mapping_values_only() -> None:
    value = {"${KEY_NAME}": ["${A}", {"x": "${B:-d} ${C}"}, 3], "y": None, "z": "$NOT_BRACED"}

    assert references(value) == ["A", "B", "C"]
    assert references("no refs") == []
    assert references(42) == []
