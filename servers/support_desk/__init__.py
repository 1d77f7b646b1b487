"""An orders-and-refunds support desk whose tools return every class of the error taxonomy."""

from servers.support_desk.server import build_server

__all__ = ["build_server"]
