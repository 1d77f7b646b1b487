"""Shared pytest set-up: anyio tests run on asyncio only."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# The sample submissions are fixtures for the grading pipeline, not notebooks to execute:
# the blank one raises NotImplementedError by design.
collect_ignore_glob = ["submissions/*"]
