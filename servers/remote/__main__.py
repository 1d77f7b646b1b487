"""Serve the remote course server over Streamable HTTP on 127.0.0.1: ``python -m servers.remote --port 8765 [flags]``."""

from servers.remote.process import main

main()
