"""A remote (Streamable HTTP) course server on 127.0.0.1 that can act out a real deployment's proxy, framework, OAuth and rate limits."""

from servers.remote.app import Options, RemoteApp, client_identity
from servers.remote.client import connect_http
from servers.remote.process import Running, running
from servers.remote.server import build_server

__all__ = ["Options", "RemoteApp", "Running", "build_server", "client_identity", "connect_http", "running"]
