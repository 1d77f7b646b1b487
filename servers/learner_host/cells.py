"""How a submission's answer cells travel to the learner host (one text, the cells joined by a separator line), and
how the host says that some failed to run.

A module of its own, importing nothing, so the grading process can extract answer code and show results without
importing the host (and with it the MCP SDK)."""

# answer_code() joins the notebook's answer cells with this line; each cell runs on its own,
# as in the notebook, so one unfinished cell does not cost the others.
CELL_SEPARATOR = "# ---- next answer cell ----"
# A host whose answer cells failed to load says so in its handshake's instructions, after this mark.
LOAD_ERROR_MARK = "answer cells failed to run: "
