"""The grader reads and writes a learner host's state folder without following what the learner put there."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from labkit import labstate


@pytest.fixture
def host(tmp_path: Path):
    state = tmp_path / "work" / "state"
    state.mkdir(parents=True)
    fd = labstate.open_folder(state)
    yield SimpleNamespace(state_dir=state, state_fd=fd)
    os.close(fd)


def test_a_plain_state_file_is_read_and_a_missing_one_is_none(host):
    (host.state_dir / "journal.jsonl").write_text('{"op": "add_note"}\n')
    assert labstate.read_text(host, "journal.jsonl") == '{"op": "add_note"}\n'
    assert labstate.read_text(host, "control.json") is None


@pytest.mark.parametrize("target", ["secret", "/dev/zero"])
def test_a_link_in_place_of_a_state_file_is_refused_not_followed(host, tmp_path: Path, target: str):
    secret = tmp_path / "secret"
    secret.write_text("the instructor's token")
    (host.state_dir / "journal.jsonl").symlink_to(secret if target == "secret" else target)
    with pytest.raises(labstate.StateFileRefused, match="not a plain file"):
        labstate.read_text(host, "journal.jsonl")


def test_a_fifo_in_place_of_a_state_file_is_refused_without_blocking(host):
    os.mkfifo(host.state_dir / "journal.jsonl")
    with pytest.raises(labstate.StateFileRefused, match="not a plain file"):
        labstate.read_text(host, "journal.jsonl")


def test_a_state_file_larger_than_the_limit_is_refused(host, monkeypatch):
    monkeypatch.setattr(labstate, "READ_LIMIT", 10)
    (host.state_dir / "journal.jsonl").write_text("x" * 11)
    with pytest.raises(labstate.StateFileRefused, match="larger than"):
        labstate.read_text(host, "journal.jsonl")


def test_writing_over_a_link_replaces_the_link_and_leaves_its_target_alone(host, tmp_path: Path):
    gradebook = tmp_path / "gradebook.db"
    gradebook.write_text("the gradebook")
    (host.state_dir / "control.json").symlink_to(gradebook)
    labstate.write_text(host, "control.json", '{"size": 3}')
    assert gradebook.read_text() == "the gradebook"
    assert not (host.state_dir / "control.json").is_symlink()
    assert (host.state_dir / "control.json").read_text() == '{"size": 3}'
    labstate.remove(host, "control.json")
    assert not (host.state_dir / "control.json").exists()


def test_a_state_folder_swapped_for_a_link_after_it_was_opened_is_not_followed(host, tmp_path: Path):
    elsewhere = tmp_path / "course"
    elsewhere.mkdir()
    (elsewhere / "journal.jsonl").write_text("the course's file")
    moved = host.state_dir.with_name("moved")
    host.state_dir.rename(moved)
    host.state_dir.symlink_to(elsewhere)  # what the learner's code could do to its own folder
    labstate.write_text(host, "control.json", "{}")
    assert not (elsewhere / "control.json").exists() and (moved / "control.json").exists()
    assert labstate.read_text(host, "journal.jsonl") is None  # the original folder has none


def test_without_a_descriptor_a_link_in_place_of_the_folder_is_refused(tmp_path: Path):
    elsewhere = tmp_path / "course"
    elsewhere.mkdir()
    (tmp_path / "state").symlink_to(elsewhere)
    with pytest.raises(OSError):
        labstate.read_text(SimpleNamespace(state_dir=tmp_path / "state"), "journal.jsonl")
