"""What lab 2 hands the learner: the credential variable names and the scenario's facts."""

from grader.expansion import CREDENTIAL_VARIABLES

# The scenario of part C. The tokens are real secrets in the story: where may each one appear?
SCENARIO = {
    "team_server_script": "servers/support_desk/__main__.py",  # the team's desk server: a script in the repository
    "tracker_url": "https://tracker.example.com/mcp",  # the team's remote tracker (http)
    "tracker_token_variable": "TRACKER_TOKEN",  # each developer keeps their own token in this variable
    "my_tracker_token": "trk_live_4f9a1c2e7b",  # yours
    "notes_module": "servers.notes",  # your personal notes utility, wanted in every project
    "experiment_token": "dsk_live_8c1e55a0",  # the experimental desk's token, given to you alone
}

__all__ = ["CREDENTIAL_VARIABLES", "SCENARIO"]
