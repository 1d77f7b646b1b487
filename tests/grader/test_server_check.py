"""``grader.server_check``: every rule family together, on a well-built server, the course's servers, and from the command line.

Each rule family's own tests are in ``tests/grader/checker/``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from checker.shop import REPO, check, shop


def test_a_well_built_server_passes_every_required_rule_and_the_description_heuristic() -> None:
    report = check(shop(), expected_tools=["search_orders", "get_order"])

    assert report.ok and report.failed_required == []
    assert report.of("description.what_when_how", "search_orders")[0].passed is True
    assert report.tools == ["search_orders", "get_order"]


@pytest.mark.parametrize("module", ["support_desk", "notes", "tracker"])
def test_the_course_servers_pass_every_required_rule(module: str) -> None:
    build = __import__(f"servers.{module}", fromlist=["build_server"]).build_server

    report = check(build(), server_name=module)

    assert report.failed_required == [], report.table()


def test_check_server_over_stdio_end_to_end_prints_json_and_exits_0() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check-server",
            "--command",
            f"{sys.executable} -m servers.support_desk",
            "--expect",
            "search_orders,get_order,refund_order",
            "--json",
        ],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    assert report["ok"] is True and report["tools"] == ["search_orders", "get_order", "refund_order"]
    assert report["server"] == "support-desk"
    assert next(f for f in report["findings"] if f["rule"] == "whitelist")["passed"] is True
    # The checker captured the server's stderr itself and found the toolkit's "client connected" line.
    assert next(f for f in report["findings"] if f["rule"] == "initialize.logged")["passed"] is True
