"""The tracker across the process boundary: configured by TRACKER_ISSUES, and refusing a bad value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict

from servers.client import connect
from servers.tracker.tracker import make_issue


def test_the_stdio_tracker_serves_a_sprint_of_the_size_tracker_issues_gives() -> None:
    # connect() bounds every call with anyio.fail_after(timeout).
    with connect("tracker", env={"TRACKER_ISSUES": "30"}, timeout=30) as tracker:
        catalog = json.loads(tracker.read("tracker://sprints/current/issues"))
        issue = tracker.call("get_issue", key="PROJ-30")

    assert catalog["count"] == 30
    assert [entry["key"] for entry in catalog["issues"]] == [f"PROJ-{i}" for i in range(1, 31)]
    assert issue["isError"] is False
    assert issue["structuredContent"]["issue"] == asdict(make_issue(30))


def test_a_bad_tracker_issues_value_stops_the_process_with_a_sentence_not_a_traceback() -> None:
    env = {**os.environ, "TRACKER_ISSUES": "lots"}

    finished = subprocess.run(
        [sys.executable, "-m", "servers.tracker"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert finished.returncode != 0
    assert "TRACKER_ISSUES='lots'" in finished.stderr
    assert "whole number of issues from 0 to 1000" in finished.stderr
    assert "Traceback" not in finished.stderr
    assert finished.stdout == ""
