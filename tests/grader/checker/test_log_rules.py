"""``grader.checker.log_rules``: the server's stderr shows the connecting client's protocol version and name."""

from __future__ import annotations

from pathlib import Path

from grader.checker.connect import CLIENT_NAME

from .shop import check, logging_server, only, shop


def test_initialize_logging_passes_when_stderr_shows_the_clients_protocol_version_and_name(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"

    report = check(logging_server(log), stderr_path=log)

    found = only(report, "initialize.logged", "server")
    assert found.passed is True and CLIENT_NAME in found.message


def test_initialize_logging_fails_as_advice_when_stderr_lacks_them_and_is_not_checked_without_a_capture(
    tmp_path: Path,
) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("WARNING: something unrelated\n")

    silent = only(check(shop(), stderr_path=log), "initialize.logged", "server")
    unknown = only(check(shop()), "initialize.logged", "server")

    assert silent.passed is False and silent.severity == "advice"
    assert unknown.passed is None and unknown.severity == "advice"
