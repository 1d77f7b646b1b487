"""Run the notes server on stdio: ``python -m servers.notes``."""

from servers.notes.server import main

main()
