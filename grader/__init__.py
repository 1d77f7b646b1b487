"""The reference model of the exam rules, the grading harness and the instructor CLI."""

import sys

# jsonschema (imported by nbformat, nbgrader and the MCP SDK) imports rfc3987_syntax, where it is installed, only to
# check the "iri" and "iri-reference" string formats, and rfc3987_syntax compiles a grammar as it is imported: 1 to
# 2 s of CPU in every process that imports jsonschema, the grader's, each worker's and each fork server's. Nothing
# the course runs checks those formats; without the module, jsonschema leaves them unchecked, as it does wherever
# the package is not installed. A process that has already imported it keeps it.
sys.modules.setdefault("rfc3987_syntax", None)
