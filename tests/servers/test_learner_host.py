"""The learner host in memory: loading learner code, calling it safely, and lab 1's harness tools."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from grader.labs import LAB_MODULES
from grader.labs.lab1_error_results import checks
from labkit.checking import run_check
from servers.client import connect
from servers.learner_host import build_server, load_learner_code
from servers.learner_host.calls import (
    LEARNER_CODE_FAILED,
    LearnerCodeError,
    as_call_tool_result,
    call_learner,
)
from servers.learner_host.cells import CELL_SEPARATOR
from servers.support_desk import kit
from servers.support_desk.desk import Caller, Desk, PaymentGateway
from servers.support_desk.server import build_server as build_desk_server

LAB = "lab1_error_results"

# A handler that reports the desk session it was given, so tests can see what host_reset did.
ECHO_DESK = """
def get_order(desk, order_id):
    desk.refunded_usd[order_id] = desk.refunded_usd.get(order_id, 0) + 1
    return {
        "isError": False,
        "content": [{"type": "text", "text": "seen"}],
        "structuredContent": {
            "role": desk.caller.role,
            "canRefund": desk.caller.can("refunds:write"),
            "failFirst": desk.gateway.fail_first,
            "seen": desk.refunded_usd[order_id],
        },
    }


def refund_order(desk, order_id, amount_usd, reason):
    try:
        refund_id = desk.gateway.refund(order_id, amount_usd)
    except UpstreamUnavailable:
        return {"isError": True, "content": [{"type": "text", "text": "gateway down"}], "structuredContent": {"errorCategory": "transient"}}
    return {"isError": False, "content": [{"type": "text", "text": "ok"}], "structuredContent": {"refundId": refund_id}}
"""

# Valid arguments for every harness tool, so each call reaches its handler.
VALID_ARGUMENTS: dict[str, dict[str, Any]] = {
    "host_reset": {"role": "agent"},
    "build_result": {"builder": "transient_error", "kwargs": {"message": "Timed out."}},
    "search_orders": {"customer_email": "alice@example.com"},
    "get_order": {"order_id": "ORD-1001"},
    "refund_order": {"order_id": "ORD-1001", "amount_usd": 10, "reason": "damaged"},
    "decide": {"result": {"isError": False, "content": []}},
    "recover": {
        "items": ["A"],
        "endpoints": ["primary"],
        "script": {"primary": {"A": [{"isError": False, "content": []}]}},
    },
}


def host(code: str, **kwargs: Any):
    namespace, load_error = load_learner_code(LAB, code)
    assert load_error is None, load_error
    return connect(build_server(LAB, namespace, **kwargs), timeout=10)


def learner_error(session, tool: str, **arguments: Any) -> str:
    with pytest.raises(MCPError) as caught:
        session.call(tool, **arguments)
    assert caught.value.code == LEARNER_CODE_FAILED
    return caught.value.message


# --- loading learner code ----------------------------------------------------------------------


def test_learner_code_sees_the_labs_kit_names() -> None:
    code = "delay = backoff_delay(3)\norders = len(ORDERS)\nstate = DeskState(Caller('agent'), PaymentGateway())\n"

    namespace, load_error = load_learner_code(LAB, code)

    assert load_error is None
    assert {"ORDERS", "DeskState", "backoff_delay", "UpstreamUnavailable", "ORDER_ID", "REFUND_LIMIT_USD"} <= set(
        kit.__all__
    )
    for name in kit.__all__:
        assert namespace[name] is getattr(kit, name)
    assert namespace["delay"] == 2.0
    assert namespace["orders"] == len(kit.ORDERS) == 5
    assert isinstance(namespace["state"], kit.DeskState)


@pytest.mark.parametrize(
    ("lab", "sdk"),
    [
        ("lab3_tools_resources", ("MCPServer", "ResourceError", "CallToolResult", "TextContent", "ToolAnnotations")),
        ("lab4_server_integration", ("MCPServer", "CallToolResult", "TextContent", "ToolAnnotations", "Field")),
    ],
)
def test_a_server_labs_kit_hands_out_the_sdks_pieces_it_imports_on_first_use(lab, sdk) -> None:
    """Labs 3 and 4's kits import the SDK's pieces when first asked (the grader reads their scenario constants
    without the SDK), and hand out the SDK's own objects: to the answer cells, and to a notebook's import."""
    import importlib

    import mcp_types
    from mcp.server.mcpserver import MCPServer
    from pydantic import Field

    kit_module = importlib.import_module(f"servers.learner_host.kit_lab{lab[3]}")
    from mcp.server.mcpserver.exceptions import ResourceError

    sdk_objects = {
        **{name: getattr(mcp_types, name) for name in ("CallToolResult", "TextContent", "ToolAnnotations")},
        "MCPServer": MCPServer,
        "Field": Field,
        "ResourceError": ResourceError,
    }
    namespace, load_error = load_learner_code(lab, "server = MCPServer('mine')\n")

    assert load_error is None
    for name in sdk:
        assert name in kit_module.__all__
        assert getattr(kit_module, name) is sdk_objects[name] is namespace[name]
    assert isinstance(namespace["server"], MCPServer)
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        kit_module.Nothing  # noqa: B018 - a name the kit does not have is still an AttributeError


def test_each_load_gets_a_fresh_namespace() -> None:
    first, _ = load_learner_code(LAB, "ORDERS = ()\nmine = 1\n")
    second, _ = load_learner_code(LAB, "")

    assert first["ORDERS"] == ()
    assert second["ORDERS"] is kit.ORDERS
    assert "mine" not in second


def test_a_load_error_is_reported_with_its_line() -> None:
    namespace, load_error = load_learner_code(LAB, "x = 1\n\ny = x / 0\nz = 2\n")

    assert load_error == "ZeroDivisionError: division by zero (line 3 of your answer cells)"
    assert namespace["x"] == 1
    assert "z" not in namespace


def test_a_syntax_error_is_reported_with_its_line() -> None:
    _, load_error = load_learner_code(LAB, "def ok():\n    return 1\n\ndef broken(:\n    pass\n")

    assert load_error is not None
    assert load_error.startswith("SyntaxError: ")
    assert load_error.endswith("(line 4 of your answer cells)")


def test_learner_code_that_exits_or_is_interrupted_while_loading_does_not_stop_the_host() -> None:
    _, exited = load_learner_code(LAB, "import sys\nsys.exit('bye')\n")
    _, interrupted = load_learner_code(LAB, "raise KeyboardInterrupt\n")

    assert exited == "SystemExit: bye (line 2 of your answer cells)"
    assert interrupted == "KeyboardInterrupt: (no message) (line 1 of your answer cells)"


def test_every_call_that_needs_a_missing_function_names_the_load_error() -> None:
    namespace, load_error = load_learner_code(LAB, "def f():\n    pass\nraise ValueError('bad cell')\n")
    assert load_error == "ValueError: bad cell (line 3 of your answer cells)"

    with connect(build_server(LAB, namespace, load_error=load_error), timeout=10) as session:
        tools = [tool["name"] for tool in session.tools()]
        assert set(tools) == set(VALID_ARGUMENTS)
        for tool in tools:
            if tool == "host_reset":  # the harness's own tool needs no learner code
                continue
            message = learner_error(session, tool, **VALID_ARGUMENTS[tool])
            assert message.startswith("Your answer cells define no function named ")
            assert message.endswith(
                "Your answer cells failed to run: ValueError: bad cell (line 3 of your answer cells)."
            )


def test_each_answer_cell_runs_on_its_own_so_a_broken_cell_keeps_the_others() -> None:
    code = f"def first():\n    return 1\n{CELL_SEPARATOR}\nraise NotImplementedError()\n{CELL_SEPARATOR}\ndef third():\n    return 3\n"
    namespace, load_error = load_learner_code(LAB, code)
    assert namespace["first"]() == 1 and namespace["third"]() == 3
    assert load_error == "answer cell 2 is not written yet (it raises NotImplementedError)"


# --- calling learner code ----------------------------------------------------------------------


def test_calling_a_function_the_code_does_not_define_says_so() -> None:
    with pytest.raises(LearnerCodeError) as caught:
        call_learner({}, "decide", {})

    assert caught.value.message == "Your answer cells define no function named decide."


def test_calling_a_name_that_is_not_a_function_says_what_it_is() -> None:
    with pytest.raises(LearnerCodeError) as caught:
        call_learner({"decide": 3}, "decide", {})

    assert caught.value.message == "decide in your answer cells is a int, not a function."


def test_calling_an_unwritten_function_says_it_is_not_written_yet() -> None:
    namespace, _ = load_learner_code(
        LAB, "def decide(result, attempt=1, max_attempts=3):\n    raise NotImplementedError()\n"
    )

    with pytest.raises(LearnerCodeError) as caught:
        call_learner(namespace, "decide", {})

    assert caught.value.message == "decide is not written yet (it raises NotImplementedError)."


def test_a_learner_function_that_raises_is_reported_by_name_exception_and_line() -> None:
    namespace, _ = load_learner_code(
        LAB, "def decide(result, attempt=1, max_attempts=3):\n    sc = result['structuredContent']\n    return sc\n"
    )

    with pytest.raises(LearnerCodeError) as caught:
        call_learner(namespace, "decide", {})

    assert caught.value.message == "decide raised KeyError: 'structuredContent' (line 2 of your answer cells)"
    assert "Traceback" not in caught.value.message


def test_a_learner_function_that_exits_is_reported_and_the_host_survives() -> None:
    code = (
        "def decide(result, attempt=1, max_attempts=3):\n"
        "    if result.get('isError'):\n"
        "        raise SystemExit('giving up')\n"
        "    return {'action': 'success', 'reason': 'fine'}\n"
    )
    with host(code) as session:
        message = learner_error(session, "decide", result={"isError": True, "content": []})
        again = session.call("decide", result={"isError": False, "content": []})

    assert message == "decide raised SystemExit: giving up (line 3 of your answer cells)"
    assert again["isError"] is False
    assert again["structuredContent"]["decision"] == {"action": "success", "reason": "fine"}


def test_decide_must_return_a_dict() -> None:
    with host("def decide(result, attempt=1, max_attempts=3):\n    return 'retry'\n") as session:
        message = learner_error(session, "decide", result={"isError": False, "content": []})

    assert message == "decide returned a str; it must return a dict with 'action' and 'reason'."


def test_an_endless_loop_in_learner_code_ends_at_the_sessions_timeout() -> None:
    # Shows a bug: the in-process host runs learner code on the event loop the client's
    # timeout needs, so an endless loop hangs the session (and a notebook's lab.check)
    # instead of failing the check with "did not answer in time". The loop here ends when
    # the test releases it, so the suite never hangs.
    release = threading.Event()
    namespace, _ = load_learner_code(
        LAB, "def decide(result, attempt=1, max_attempts=3):\n    while not RELEASE.is_set():\n        pass\n"
    )
    namespace["RELEASE"] = release
    outcome: list[Any] = []

    def run() -> None:
        with connect(build_server(LAB, namespace), timeout=1) as session:
            outcome.append(run_check(checks["decide_not_found"], session))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=4)
    hung = worker.is_alive()
    release.set()
    worker.join(timeout=10)

    assert not hung, "the session's 1 s timeout did not end a call stuck in an endless loop"
    assert outcome and outcome[0].host_lost
    assert "did not answer in time" in outcome[0].message


# --- results in wire format --------------------------------------------------------------------


def test_a_result_that_is_not_a_dict_is_rejected() -> None:
    with pytest.raises(LearnerCodeError) as caught:
        as_call_tool_result([{"type": "text", "text": "hi"}], "get_order")

    assert caught.value.message == "get_order returned a list; a tool result is a dict in wire format."


def test_a_result_holding_values_that_are_not_json_is_rejected() -> None:
    with pytest.raises(LearnerCodeError) as caught:
        as_call_tool_result(
            {"isError": False, "content": [], "structuredContent": {"ids": {"ORD-1001"}}}, "search_orders"
        )

    assert caught.value.message.startswith("search_orders returned something that is not JSON data (")
    assert "set" in caught.value.message


def test_a_dict_that_is_not_a_call_tool_result_is_rejected_naming_the_field() -> None:
    with pytest.raises(LearnerCodeError) as caught:
        as_call_tool_result({"isError": False, "content": "No orders."}, "search_orders")

    message = caught.value.message
    assert message.startswith("search_orders returned something that is not a CallToolResult: content: ")
    assert message.endswith(".")


def test_snake_case_result_keys_are_rejected_as_python_attribute_names() -> None:
    with pytest.raises(LearnerCodeError) as caught:
        as_call_tool_result({"is_error": True, "content": []}, "refund_order")

    assert caught.value.message == (
        "refund_order returned Python attribute names (is_error); the wire format is camelCase: isError, structuredContent."
    )


def test_a_valid_result_comes_back_as_json_data() -> None:
    value = {
        "isError": True,
        "content": [{"type": "text", "text": "Timed out."}],
        "structuredContent": {"retryAfterSeconds": 2},
    }

    assert as_call_tool_result(value, "refund_order") == value


# --- lab 1's harness tools -----------------------------------------------------------------


def test_the_hosts_desk_tools_match_the_support_desk_servers_tools() -> None:
    with (
        host("") as learner,
        connect(build_desk_server(Desk(Caller("agent"), PaymentGateway())), timeout=10) as reference,
    ):
        learner_tools = {tool["name"]: tool for tool in learner.tools()}
        desk_tools = reference.tools()

    assert [tool["name"] for tool in desk_tools] == ["search_orders", "get_order", "refund_order"]
    for tool in desk_tools:
        mine = learner_tools[tool["name"]]
        assert mine["inputSchema"] == tool["inputSchema"]
        assert mine["annotations"] == tool["annotations"]
        assert mine["description"] == tool["description"]


def test_an_unknown_lab_stops_with_a_message_listing_the_known_labs() -> None:
    with pytest.raises(SystemExit) as loading:
        load_learner_code("lab9_nothing", "")
    with pytest.raises(SystemExit) as building:
        build_server("lab9_nothing", {})

    for caught in (loading, building):
        assert str(caught.value.code) == f"No lab named 'lab9_nothing'; known labs: {', '.join(sorted(LAB_MODULES))}."


def test_host_reset_sets_the_callers_role_and_the_gateways_failures() -> None:
    with host(ECHO_DESK) as session:
        default = session.call("get_order", order_id="ORD-1001")["structuredContent"]
        session.call("host_reset", role="agent", fail_first=2)
        as_agent = session.call("get_order", order_id="ORD-1001")["structuredContent"]
        refunds = [
            session.call("refund_order", order_id="ORD-1001", amount_usd=1, reason="x")["isError"] for _ in range(3)
        ]

    assert default == {"role": "supervisor", "canRefund": True, "failFirst": 0, "seen": 1}
    # A reset starts a fresh desk session: what the previous one recorded is gone.
    assert as_agent == {"role": "agent", "canRefund": False, "failFirst": 2, "seen": 1}
    assert refunds == [True, True, False]


def test_host_reset_refuses_an_unknown_role() -> None:
    with host(ECHO_DESK) as session:
        message = learner_error(session, "host_reset", role="admin")

    assert message == "host_reset: unknown role 'admin'"


def test_build_result_only_calls_the_labs_builders() -> None:
    with host("def decide(result, attempt=1, max_attempts=3):\n    return {}\n") as session:
        message = learner_error(session, "build_result", builder="decide", kwargs={"result": {}})

    assert message.startswith("build_result: 'decide' is not one of the lab's builders")


def test_recover_reports_the_calls_and_waits_it_observed() -> None:
    code = (
        "def recover(items, call, endpoints, sleep, max_attempts=3):\n"
        "    sleep(0.5)\n"
        "    return {'status': 'complete', 'results': [call(endpoints[-1], item)['structuredContent'] for item in items]}\n"
    )
    ok = {"isError": False, "content": [], "structuredContent": {"n": 1}}
    with host(code) as session:
        out = session.call(
            "recover", items=["A", "B"], endpoints=["primary", "replica"], script={"replica": {"A": [ok], "B": [ok]}}
        )

    assert out["structuredContent"] == {
        "envelope": {"status": "complete", "results": [{"n": 1}, {"n": 1}]},
        "calls": [["replica", "A"], ["replica", "B"]],
        "sleeps": [0.5],
    }


def test_lab2_answers_many_cases_in_one_call_each_with_its_value_or_why_it_failed() -> None:
    code = """
def expand_value(text, env, remote_field):
    if text == "boom":
        raise KeyError(text)
    return text.upper()
"""
    namespace, _ = load_learner_code("lab2_scopes_expansion", code)
    with connect(build_server("lab2_scopes_expansion", namespace), timeout=10) as session:
        result = session.call(
            "expand_values", cases=[{"text": "a", "env": {}}, {"text": "boom", "env": {}}, {"text": "b", "env": {}}]
        )

    answers = result["structuredContent"]["answers"]
    assert answers[0] == {"value": "A"} and answers[2] == {"value": "B"}
    assert answers[1]["error"].startswith("expand_value raised KeyError: 'boom' (line 4 of")


def test_loading_answer_cells_leaves_the_sdk_no_room_to_install_rich_logging():
    # With rich installed, MCPServer() would otherwise log through rich, whose slow tracebacks made a
    # sys.exit in a learner's tool look like a hang to the grader.
    import logging

    from servers.learner_host.host import load_learner_code

    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers.clear()
    try:
        namespace, load_error = load_learner_code(
            "lab4_server_integration", 'from mcp.server.mcpserver import MCPServer\nserver = MCPServer("mine")\n'
        )
        assert load_error is None and "server" in namespace
        assert root.handlers and all(type(h) is logging.StreamHandler for h in root.handlers)
    finally:
        root.handlers[:] = saved


def test_the_host_serves_without_the_sdks_spans_and_keeps_a_learners_own_middleware() -> None:
    """``host.serve`` drops the SDK's OpenTelemetry middleware (grading exports no traces); any other middleware, a
    learner's own server's included, stays, in its order. (That the wire is the same without it: test_in_turn.)"""
    from mcp.server._otel import OpenTelemetryMiddleware
    from mcp.server.mcpserver import MCPServer

    from servers.learner_host.host import untraced

    server = MCPServer("learner")._lowlevel_server
    assert any(isinstance(step, OpenTelemetryMiddleware) for step in server.middleware)  # on by default

    async def first(ctx, call_next):
        return await call_next(ctx)

    async def second(ctx, call_next):
        return await call_next(ctx)

    server.middleware[:0] = [first]
    server.middleware.append(second)
    kept = [step for step in server.middleware if not isinstance(step, OpenTelemetryMiddleware)]
    assert len(kept) == len(server.middleware) - 1 and kept[0] is first and kept[-1] is second
    assert untraced(server) is server
    assert server.middleware == kept  # the SDK's own request-state boundary among them
