"""The server checker's rules, one module per rule family; ``grader.server_check`` runs them.

Layers, lowest first; a module imports only modules of a lower layer:

1. ``findings``: what the checker takes and gives (``Sample``, ``Finding``, ``Report``, ``RULES``).
2. ``limits``: every limit of Claude Code the rules apply, each citing its source section.
3. ``connect``: starting a server and opening a session; listing its tools.
4. the rule families, independent of each other: ``tool_rules``, ``description_rules``,
   ``result_rules``, ``log_rules``, ``http_rules``; and ``checklist``, which reads a report.
"""
