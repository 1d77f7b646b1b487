"""Run the support desk on stdio: ``python -m servers.support_desk``."""

from servers.support_desk.server import main

main()
