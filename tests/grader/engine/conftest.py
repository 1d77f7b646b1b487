"""The engine's tests share the helpers of tests/grader (a batch that fails on purpose, secrets nearby)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
