"""What lab 2 hands the learner: the credential variable names and the scenario's facts.

The names are data the learner is given, kept here as a copy of the reference model's set
(``grader.expansion.CREDENTIAL_VARIABLES``; a test keeps the two equal) so that the learner host,
which imports this kit, holds nothing of the reference model.
"""

# Variables Claude Code reads as empty when it expands a remote server's url or headers.
CREDENTIAL_VARIABLES = frozenset(
    {
        "ACTIONS_RUNTIME_TOKEN",
        "AGENT_PROXY_AUTH_TOKEN",
        "ALL_PROXY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_AWS_API_KEY",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_FOUNDRY_API_KEY",
        "ANTHROPIC_FOUNDRY_AUTH_TOKEN",
        "ANTHROPIC_IDENTITY_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AZURE_CLIENT_CERTIFICATE_PASSWORD",
        "AZURE_CLIENT_SECRET",
        "AZURE_PASSWORD",
        "CARGO_REGISTRY_TOKEN",
        "CLAUDE_BRIDGE_OAUTH_TOKEN",
        "CLAUDE_CODE_ARTIFACTS_API_TOKEN",
        "CLAUDE_CODE_CLIENT_CERT",
        "CLAUDE_CODE_CLIENT_KEY",
        "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
        "CLAUDE_CODE_HFI_BEARER_TOKEN",
        "CLAUDE_CODE_HOST_CREDS_FILE",
        "CLAUDE_CODE_MCP_SERVE_AUTH_TOKEN",
        "CLAUDE_CODE_MEMORY_API_BASE_URL",
        "CLAUDE_CODE_MEMORY_API_TOKEN",
        "CLAUDE_CODE_MESSAGING_TOKEN",
        "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_OTEL_DIAG_STDERR",
        "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
        "CLAUDE_CODE_SLACK_TAG_TOKEN",
        "CLAUDE_SESSION_INGRESS_TOKEN_FILE",
        "CLAUDE_TRUSTED_DEVICE_TOKEN",
        "CLOUDSDK_AUTH_ACCESS_TOKEN",
        "CODEARTIFACT_AUTH_TOKEN",
        "COMPOSER_AUTH",
        "CONSUL_HTTP_TOKEN",
        "DEFAULT_WORKFLOW_TOKEN",
        "DISCORD_WEBHOOK",
        "ENVIRONMENT_SERVICE_KEY",
        "GOAUTH",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_GHA_CREDS_PATH",
        "GOOGLE_OAUTH_ACCESS_TOKEN",
        "GOPROXY",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "IDENTITY_HEADER",
        "MCP_CLIENT_SECRET",
        "MCP_XAA_IDP_CLIENT_SECRET",
        "MSI_SECRET",
        "NODE_AUTH_TOKEN",
        "NOMAD_TOKEN",
        "NPM_TOKEN",
        "NUGET_AUTH_TOKEN",
        "OVERRIDE_GITHUB_TOKEN",
        "PIP_EXTRA_INDEX_URL",
        "PIP_INDEX_URL",
        "PYPI_TOKEN",
        "SELF_HOSTED_RUNNER_ENVIRONMENT_SECRET",
        "SELF_HOSTED_RUNNER_POOL_SECRET",
        "SLACK_WEBHOOK",
        "SLACK_WEBHOOK_URL",
        "SONAR_TOKEN",
        "SSH_SIGNING_KEY",
        "TWINE_PASSWORD",
        "TWINE_USERNAME",
        "UV_DEFAULT_INDEX",
        "UV_EXTRA_INDEX_URL",
        "UV_INDEX",
        "UV_INDEX_URL",
        "VAULT_TOKEN",
    }
)

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
