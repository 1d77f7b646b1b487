"""``python -m grader``: the instructor and scripting command line."""

import sys

from grader.cli import exiting, main

sys.exit(exiting(main()))
