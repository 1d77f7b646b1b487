"""Open an MCP session to a remote (Streamable HTTP) server, with headers such as a bearer token."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from servers.client import Session


@asynccontextmanager
async def http_transport(url: str, headers: Mapping[str, str] | None = None) -> AsyncIterator[Any]:
    """The SDK's Streamable HTTP client transport, its HTTP client carrying ``headers`` on every request."""
    async with (
        create_mcp_http_client(headers=dict(headers or {})) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def connect_http(url: str, *, headers: Mapping[str, str] | None = None, timeout: float | None = 30.0) -> Session:
    """A blocking session (the course's ``Session``) to the MCP endpoint at ``url``."""
    return Session(http_transport(url, headers), timeout=timeout)
