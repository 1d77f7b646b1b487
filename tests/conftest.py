"""Shared pytest set-up: anyio tests run on asyncio only."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
