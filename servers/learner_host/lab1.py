"""Lab 1's harness tools: the learner's error results, desk handlers, decide() and recover().

- ``host_reset``: start a fresh desk session with a caller role and an upstream that
  fails its first N calls.
- ``build_result``: call one of the learner's result builders; the tool's result *is*
  what the learner built, so checks judge it on the wire.
- ``search_orders``, ``get_order``, ``refund_order``: the desk's tools (same names,
  schemas and annotations as ``servers.support_desk``) answered by the learner's handlers.
- ``decide``: the learner's decision for a CallToolResult.
- ``recover``: the learner's local recovery against a scripted upstream; returns the
  envelope with the calls and waits the host observed.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from pydantic import BaseModel, Field

from servers.learner_host.calls import (
    LearnerCodeError,
    as_call_tool_result,
    as_json,
    call_learner,
    harness_result,
)
from servers.support_desk.tools import desk_specs
from servers.support_desk.world import ROLE_SCOPES, Caller, DeskState, PaymentGateway
from servers.toolkit import ToolSpec

BUILDERS = (
    "transient_error",
    "validation_error",
    "business_error",
    "permission_error",
    "not_found_error",
    "empty_result",
)

HARNESS = types.ToolAnnotations(
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)
PURE = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class HostReset(BaseModel):
    role: str = Field("supervisor", description="The caller's role: " + ", ".join(ROLE_SCOPES))
    fail_first: int = Field(0, ge=0, description="The first N payment-gateway calls fail.")


class BuildResult(BaseModel):
    builder: str = Field(description="One of: " + ", ".join(BUILDERS))
    kwargs: dict[str, Any] = Field(default_factory=dict)


class Decide(BaseModel):
    result: dict[str, Any]
    attempt: int = 1
    max_attempts: int = 3


class Recover(BaseModel):
    items: list[str]
    endpoints: list[str]
    # script[endpoint][item] is the sequence of results that endpoint gives for that item;
    # the last one repeats.
    script: dict[str, dict[str, list[dict[str, Any]]]]
    max_attempts: int = 3


class LearnerDesk:
    """The desk's tool interface, answered by the learner's handler functions over a DeskState."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.reset("supervisor", 0)

    def reset(self, role: str, fail_first: int) -> None:
        self.state = DeskState(Caller(role), PaymentGateway(fail_first=fail_first))

    def _call(self, name: str, *args: Any) -> dict[str, Any]:
        return as_call_tool_result(call_learner(self.namespace, name, self.state, *args), name)

    def search_orders(self, customer_email: str, status: str | None) -> dict[str, Any]:
        return self._call("search_orders", customer_email, status)

    def get_order(self, order_id: str) -> dict[str, Any]:
        return self._call("get_order", order_id)

    def refund_order(self, order_id: str, amount_usd: float, reason: str) -> dict[str, Any]:
        return self._call("refund_order", order_id, amount_usd, reason)


def lab1_specs(namespace: dict[str, Any]) -> list[ToolSpec]:
    desk = LearnerDesk(namespace)

    def host_reset(args: HostReset) -> dict[str, Any]:
        if args.role not in ROLE_SCOPES:
            raise LearnerCodeError(f"host_reset: unknown role {args.role!r}")
        desk.reset(args.role, args.fail_first)
        return harness_result(f"Desk reset: role {args.role}, first {args.fail_first} gateway call(s) fail.", {})

    def build_result(args: BuildResult) -> dict[str, Any]:
        if args.builder not in BUILDERS:
            raise LearnerCodeError(f"build_result: {args.builder!r} is not one of the lab's builders")
        return as_call_tool_result(call_learner(namespace, args.builder, **args.kwargs), args.builder)

    def decide(args: Decide) -> dict[str, Any]:
        decision = as_json(call_learner(namespace, "decide", args.result, args.attempt, args.max_attempts), "decide")
        if not isinstance(decision, dict):
            raise LearnerCodeError(
                f"decide returned a {type(decision).__name__}; it must return a dict with 'action' and 'reason'."
            )
        return harness_result(f"decision: {decision.get('action')}", {"decision": decision})

    def recover(args: Recover) -> dict[str, Any]:
        calls: list[list[str]] = []
        sleeps: list[float] = []
        served: dict[tuple[str, str], int] = {}

        def call(endpoint: str, item: str) -> dict[str, Any]:
            calls.append([endpoint, item])
            script = args.script.get(endpoint, {}).get(item)
            if not script:
                raise LookupError(f"no such endpoint/item: {endpoint!r}/{item!r}")
            n = served.get((endpoint, item), 0)
            served[(endpoint, item)] = n + 1
            return script[min(n, len(script) - 1)]

        def sleep(seconds: float) -> None:
            sleeps.append(seconds)

        envelope = call_learner(
            namespace, "recover", list(args.items), call, list(args.endpoints), sleep, args.max_attempts
        )
        envelope = as_json(envelope, "recover")
        return harness_result(
            f"recover made {len(calls)} call(s)", {"envelope": envelope, "calls": calls, "sleeps": sleeps}
        )

    return [
        ToolSpec("host_reset", "Start a fresh desk session.", HostReset, host_reset, HARNESS),
        ToolSpec("build_result", "Call one of the learner's result builders.", BuildResult, build_result, PURE),
        *desk_specs(desk),
        ToolSpec("decide", "The learner's decision for one CallToolResult.", Decide, decide, PURE),
        ToolSpec("recover", "The learner's local recovery against a scripted upstream.", Recover, recover, HARNESS),
    ]
