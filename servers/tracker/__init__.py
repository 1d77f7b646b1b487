"""A ticket tracker whose sprint catalog is a resource: the course's tools-versus-resources server."""

from servers.tracker.server import build_server

__all__ = ["build_server"]
