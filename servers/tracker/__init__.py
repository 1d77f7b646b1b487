"""A ticket tracker whose sprint catalog is a resource: the course's tools-versus-resources server."""

__all__ = ["build_server"]


def __getattr__(name: str):
    """The server's builder, imported on first use: the tracker's model (``servers.tracker.tracker``) is read without
    the MCP SDK."""
    if name == "build_server":
        from servers.tracker.server import build_server

        return build_server
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
