"""Run the tracker on stdio: ``python -m servers.tracker`` (``TRACKER_ISSUES`` sets the sprint's size)."""

from servers.tracker.server import main

main()
