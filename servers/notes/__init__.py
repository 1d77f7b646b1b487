"""A personal notes utility: the kind of server one keeps in user scope, for every project."""

from servers.notes.server import build_server

__all__ = ["build_server"]
