"""Lab 2's harness tools: the learner's expander, resolver and authored configuration.

- ``expand_value``: the learner's ``expand_value(text, env, remote_field)``.
- ``resolve_servers``: the learner's ``resolve_servers(user, local, project, env)``.
- ``expand_values``, ``resolve_many``: the same for many cases in one call (the generated comparisons),
  each case answered with its value or with why the learner's code failed on it.
- ``authored_config``: the configuration the learner wrote for the scenario.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from pydantic import BaseModel

from servers.learner_host.calls import (
    LOAD_ERRORS,
    LearnerCodeError,
    as_json,
    call_learner,
    harness_result,
)
from servers.toolkit import ToolSpec

PURE = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
AUTHORED = ("PROJECT_MCP_JSON", "USER_SERVERS", "LOCAL_SERVERS")


class ExpandValue(BaseModel):
    text: str
    env: dict[str, str]
    remote_field: bool = False


class ResolveServers(BaseModel):
    user: dict[str, Any]
    local: dict[str, Any]
    project: dict[str, Any]
    env: dict[str, str]


class ExpandMany(BaseModel):
    cases: list[ExpandValue]


class ResolveMany(BaseModel):
    cases: list[ResolveServers]


class Nothing(BaseModel):
    pass


def each(cases: list, answer) -> dict[str, Any]:
    """Answer every case in one call: {"value": ...} or, where the learner's code failed, {"error": why}."""
    answers = []
    for case in cases:
        try:
            answers.append({"value": answer(case)})
        except LearnerCodeError as exc:
            answers.append({"error": exc.error.message})
    return harness_result(f"{len(answers)} answer(s)", {"answers": answers})


def lab2_specs(namespace: dict[str, Any]) -> list[ToolSpec]:
    def expanded(args: ExpandValue) -> str:
        value = call_learner(namespace, "expand_value", args.text, dict(args.env), args.remote_field)
        if not isinstance(value, str):
            raise LearnerCodeError(
                f"expand_value returned a {type(value).__name__}; it must return the expanded string."
            )
        return value

    def resolved(args: ResolveServers) -> dict[str, Any]:
        servers = as_json(
            call_learner(namespace, "resolve_servers", args.user, args.local, args.project, dict(args.env)),
            "resolve_servers",
        )
        if not isinstance(servers, dict):
            raise LearnerCodeError(
                f"resolve_servers returned a {type(servers).__name__}; it must return a dict name -> server."
            )
        return servers

    def expand_value(args: ExpandValue) -> dict[str, Any]:
        value = expanded(args)
        return harness_result(value, {"value": value})

    def resolve_servers(args: ResolveServers) -> dict[str, Any]:
        servers = resolved(args)
        return harness_result(f"{len(servers)} server(s)", {"servers": servers})

    def authored_config(_: Nothing) -> dict[str, Any]:
        missing = [name for name in AUTHORED if name not in namespace]
        if missing:
            load_error = namespace.get(LOAD_ERRORS)
            why = f" Your answer cells failed to run: {load_error}." if load_error else ""
            raise LearnerCodeError(f"Your answer cells do not define {', '.join(missing)}.{why}")
        config = {name: as_json(namespace[name], name) for name in AUTHORED}
        for name, value in config.items():
            if not isinstance(value, dict):
                raise LearnerCodeError(f"{name} must be a dict; yours is a {type(value).__name__}.")
        return harness_result("authored configuration", config)

    return [
        ToolSpec("expand_value", "The learner's ${VAR} expansion of one value.", ExpandValue, expand_value, PURE),
        ToolSpec("resolve_servers", "The learner's resolution of three scopes.", ResolveServers, resolve_servers, PURE),
        ToolSpec(
            "expand_values",
            "The learner's expansion of many values, one answer each.",
            ExpandMany,
            lambda args: each(args.cases, expanded),
            PURE,
        ),
        ToolSpec(
            "resolve_many",
            "The learner's resolution of many configurations, one answer each.",
            ResolveMany,
            lambda args: each(args.cases, resolved),
            PURE,
        ),
        ToolSpec(
            "authored_config", "The configuration the learner wrote for the scenario.", Nothing, authored_config, PURE
        ),
    ]
