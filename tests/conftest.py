"""Shared pytest set-up: anyio tests run on asyncio only."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# The sample and hostile submissions are fixtures for the grading pipeline, not notebooks to
# execute: the blank one raises NotImplementedError by design, the hostile ones loop, exit and crash.
collect_ignore_glob = ["submissions/*", "hostile/*"]
