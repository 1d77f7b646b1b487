"""Embedded stdio MCP servers used by the lessons, the labs and the grader."""
