"""``python -m grader decide``: the decision tree from the command line, with one-line errors."""

from __future__ import annotations

import gc
import io
import json
from pathlib import Path

import pytest

from grader.cli import main
from grader.taxonomy import OPERATION_FAILED, business_error, transient_error


def write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def assert_one_line_error(err: str, *fragments: str) -> None:
    assert err.startswith("error: ")
    assert err.count("\n") == 1 and err.endswith("\n")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def test_decide_prints_the_decision_for_a_file(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "gateway-timeout.json", transient_error("Timed out.", retry_after_seconds=0.0))

    code = main(["decide", str(path)])

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["action"] == "retry"
    assert out["category"] == "transient"
    assert out["delaySeconds"] == 0.5
    assert out["reason"]


def test_decide_reads_standard_input_given_a_dash(monkeypatch, capsys) -> None:
    result = business_error(
        "Too much.", code="REFUND_LIMIT_EXCEEDED", customer_message="Up to $500.", limit=500, requested=750
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(result)))

    code = main(["decide", "-"])

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["action"] == "surface_and_stop"
    assert out["customerMessage"] == "Up to $500."


def test_decide_escalates_the_operation_failed_anti_pattern(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "operation-failed.json", OPERATION_FAILED)

    assert main(["decide", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["action"] == "escalate"


@pytest.mark.parametrize(("attempt", "max_attempts"), [("3", "3"), ("2", "2"), ("1", "1")])
def test_attempt_options_turn_a_retry_into_an_escalation_when_the_budget_is_spent(
    tmp_path: Path, capsys, attempt: str, max_attempts: str
) -> None:
    path = write(tmp_path, "gateway-timeout.json", transient_error("Timed out."))

    code = main(["decide", str(path), "--attempt", attempt, "--max-attempts", max_attempts])

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["action"] == "escalate"
    assert out["attempts"] == int(attempt)


def test_attempt_options_with_budget_left_still_retry(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "gateway-timeout.json", transient_error("Timed out.", retry_after_seconds=0.0))

    code = main(["decide", str(path), "--attempt", "2", "--max-attempts", "5"])

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["action"] == "retry"
    assert out["nextAttempt"] == 3
    assert out["delaySeconds"] == 1.0


def test_malformed_json_exits_2_naming_the_file_and_position_without_a_traceback(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "truncated.json", '{\n  "isError": true,\n  "content": [\n')

    code = main(["decide", str(path)])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert_one_line_error(captured.err, str(path), "not valid JSON", "line 4", "column 1")


def test_malformed_json_on_standard_input_names_standard_input(monkeypatch, capsys) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("{'isError': True}"))

    code = main(["decide", "-"])

    captured = capsys.readouterr()
    assert code == 2
    assert_one_line_error(captured.err, "standard input", "line 1", "column 2")


@pytest.mark.parametrize(
    "not_a_result",
    [[1, 2], {"is_error": True, "content": []}, {"hello": "world"}, "just a string"],
    ids=["a-list", "snake-case", "unrelated-object", "a-json-string"],
)
def test_valid_json_that_is_not_a_call_tool_result_exits_2(tmp_path: Path, capsys, not_a_result) -> None:
    path = write(tmp_path, "not-a-result.json", json.dumps(not_a_result))

    code = main(["decide", str(path)])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert_one_line_error(captured.err, str(path), "does not hold a CallToolResult")


def test_a_missing_file_exits_2_with_a_message(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nowhere.json"

    code = main(["decide", str(missing)])

    captured = capsys.readouterr()
    assert code == 2
    assert_one_line_error(captured.err, "Cannot read", str(missing), "No such file")


def test_a_directory_instead_of_a_file_exits_2_with_a_message(tmp_path: Path, capsys) -> None:
    code = main(["decide", str(tmp_path)])

    captured = capsys.readouterr()
    assert code == 2
    assert_one_line_error(captured.err, "Cannot read", str(tmp_path))


def test_a_file_that_is_not_utf8_text_exits_2_with_a_message(tmp_path: Path, capsys) -> None:
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00{")

    code = main(["decide", str(path)])

    captured = capsys.readouterr()
    assert code == 2
    assert_one_line_error(captured.err, str(path))


def test_an_attempt_beyond_the_cap_exits_2(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "gateway-timeout.json", transient_error("Timed out."))

    code = main(["decide", str(path), "--attempt", "4", "--max-attempts", "3"])

    captured = capsys.readouterr()
    assert code == 2
    assert_one_line_error(captured.err, "--attempt")


def test_the_module_entry_point_runs_the_cli(tmp_path: Path, capsys, monkeypatch) -> None:
    import runpy

    path = write(tmp_path, "ok.json", {"isError": False, "content": [{"type": "text", "text": "Done."}]})
    monkeypatch.setattr("sys.argv", ["python -m grader", "decide", str(path)])

    try:
        with pytest.raises(SystemExit) as exit_info:
            runpy.run_module("grader", run_name="__main__")
        frozen = gc.get_freeze_count()
    finally:
        gc.unfreeze()  # the entry freezes what the process holds as it ends; this process (pytest's) goes on

    assert exit_info.value.code == 0
    assert json.loads(capsys.readouterr().out)["action"] == "success"
    assert frozen > 0


# --- how the command ends ---------------------------------------------------------------------------

ENTRY = """
import atexit, gc, json, runpy, sys
atexit.register(lambda: print(json.dumps({"frozen": gc.get_freeze_count()}), flush=True))
sys.argv = ["grader", "decide", sys.argv[1]]
if sys.argv[-1] and ENTRY == "module":
    runpy.run_module("grader", run_name="__main__", alter_sys=True)
else:
    from grader.cli import console
    sys.exit(console())
"""


@pytest.mark.parametrize("entry", ["module", "console"])
def test_the_command_leaves_its_objects_to_the_process_end_not_to_the_cycle_collector(tmp_path: Path, entry) -> None:
    """Both entries freeze what the command made before the interpreter shuts down (the collector's last pass over
    it cost about half a second of every command), and still run the exit handlers and print their output."""
    import subprocess
    import sys

    result = write(tmp_path, "result.json", transient_error("Timed out.", retry_after_seconds=0.0))
    done = subprocess.run(
        [sys.executable, "-c", ENTRY.replace("ENTRY ==", f"{entry!r} =="), str(result)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    decision, at_exit = done.stdout.strip().rsplit("\n", 1)
    assert json.loads(decision)["action"] == "retry"
    assert json.loads(at_exit)["frozen"] > 10_000


def test_the_command_line_is_read_before_nbgrader_is_imported():
    """``autograde`` starts the learner hosts' fork server once its command line is read, so that the server boots on
    another core while this process imports nbgrader (most of its start): reading the command line imports none of it."""
    import subprocess
    import sys

    probe = "import sys; from grader.cli import build_parser; build_parser(); print(sorted({m.split('.')[0] for m in sys.modules} & {'nbgrader', 'nbconvert', 'sqlalchemy'}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]"


def test_autograde_begins_the_checks_process_before_nbgrader_is_imported(tmp_path):
    """Through the command itself: nothing between reading the command line and ``checks_process.begin()`` (which
    begins the fork server in that process; here, where it does not start, in this one) imports nbgrader (an import of
    the pipeline for its error type once did, and the server booted only after it)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "events = []\n"
        "class Imports:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'nbgrader':\n"
        "            events.append('nbgrader')\n"
        "sys.meta_path.insert(0, Imports())\n"
        "from grader.engine import checks_process, forkserver\n"
        "checks_process.begin = lambda: events.append('checks')\n"
        "forkserver.begin = lambda: events.append('fork server')\n"
        "from grader import cli\n"
        "try:\n"
        f"    cli.main(['autograde', {str(tmp_path / 'submitted')!r}, '--course', {str(tmp_path / 'course')!r}])\n"
        "except BaseException:\n"
        "    pass\n"
        "print(events)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip().splitlines()[-1] == "['checks', 'fork server', 'nbgrader']"


@pytest.mark.parametrize(
    ("command", "said"), [("decide", "interrupted (Ctrl-C)"), ("autograde", "autograde was interrupted")]
)
def test_ctrl_c_ends_a_command_with_one_line_and_status_130(tmp_path: Path, capsys, monkeypatch, command, said) -> None:
    import signal

    from grader import cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, f"cmd_{command}", interrupted)
    before = signal.getsignal(signal.SIGINT)
    try:
        assert main([command, str(tmp_path)]) == 130
        assert signal.getsignal(signal.SIGINT) is signal.SIG_DFL  # a second Ctrl-C ends it at once
    finally:
        signal.signal(signal.SIGINT, before)
    err = capsys.readouterr().err
    assert err.startswith(f"stopped: {said}") and err.count("\n") == 1, err
