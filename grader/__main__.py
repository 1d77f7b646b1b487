"""``python -m grader``: the instructor and scripting command line."""

import sys

from grader.cli import main

sys.exit(main())
