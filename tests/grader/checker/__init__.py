"""Tests of ``grader.checker``, one module per rule family."""
