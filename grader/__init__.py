"""The reference model of the exam rules, the grading harness and the instructor CLI."""
