"""An orders-and-refunds support desk whose tools return every class of the error taxonomy."""


def __getattr__(name: str):
    # The server (and with it the desk's rules) loads only when asked for: the learner host imports
    # this package for lab 1's kit and must not load the rules along with it.
    if name == "build_server":
        from servers.support_desk.server import build_server

        return build_server
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["build_server"]
