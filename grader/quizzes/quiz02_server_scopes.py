"""Quiz 2: server scopes. Scenario questions on lesson 02, keyed to the exam guide."""

from __future__ import annotations

from grader.quizzes.model import Question, Quiz

SCOPES = "*Exam guide › Scopes: local / project / user*"
SCHEMA = "*Exam guide › The `.mcp.json` schema (with an example)*"
EMPHASES = "*Exam guide › Exam emphases*"
DOCS_SCOPES = "*Claude Code docs, MCP › MCP installation scopes*"
DOCS_LADDER = "*Claude Code docs, MCP › Scope hierarchy and precedence*"
DOCS_APPROVAL = "*Claude Code docs, MCP › Approval of project servers and workspace trust*"

QUIZ = Quiz(
    name="quiz02_server_scopes",
    title="Quiz 2: Server scopes",
    intro=(
        "Ten scenario questions on lesson 02: where each scope is stored, who shares it, which definition wins, "
        "the `.mcp.json` schema and the approval of project servers. Each question has one best answer, the one "
        "the exam guide gives. Your answers are graded when you submit; the feedback explains every answer and, "
        "where Claude Code behaves differently from the exam guide, says what it does."
    ),
    questions=[
        Question(
            id="q01",
            theme="scopes",
            text=(
                "The team's committed `.mcp.json` defines `github` at `https://api.githubcopilot.com/mcp`. To try a "
                "GitHub MCP server you run on your machine, you add `github` in your **local** scope at "
                "`http://localhost:8082/mcp`. Which definition does Claude Code use in this project?"
            ),
            options={
                "A": "Both: two servers named `github`, one per scope",
                "B": "The `.mcp.json` one: the team's committed file always wins over personal scopes",
                "C": "The local one: local scope takes precedence over project scope",
                "D": "Neither, until you remove one of the two definitions",
            },
            answer="C",
            explanation=(
                "**C.** When one server name exists in several scopes, local wins, then project, then user, then plugin "
                "servers, then claude.ai connectors; this lets a developer override the team's configuration "
                f"locally without editing `.mcp.json` ({SCOPES}). **A** is wrong: Claude Code connects to a server once, "
                f"with one definition ({DOCS_LADDER}). **B** inverts the ladder. **D** is wrong: a clash is resolved, not "
                "blocked (Claude Code also warns that the scopes point at different endpoints)."
            ),
        ),
        Question(
            id="q02",
            theme="scopes",
            text=(
                "Your **user**-scope `github` sends an extra header `X-MCP-Readonly: true`. The project's `github` in "
                "`.mcp.json`, which wins, has only an `Authorization` header. Which headers does Claude Code send?"
            ),
            options={
                "A": "Only the project entry's headers: the winning entry is used whole",
                "B": "Both entries' headers, merged, since the user's adds a field the project's lacks",
                "C": "Only the user entry's headers, because a user's setting is more specific",
                "D": "No headers at all: conflicting entries are skipped",
            },
            answer="A",
            explanation=(
                "**A.** Project scope ranks above user scope, and Claude Code uses the whole entry from the winning source; "
                f"fields are never merged across scopes ({DOCS_LADDER}; the ladder itself is in {SCOPES}). **B** is the "
                "common misconception of a field-by-field merge. **C** inverts the ladder (user is below project). **D** "
                "is wrong: the winning definition loads."
            ),
        ),
        Question(
            id="q03",
            theme="scopes",
            text=(
                "In your checkout you run `claude mcp add --transport http stripe https://mcp.stripe.com` with no "
                "`--scope`. Where is the server stored?"
            ),
            options={
                "A": "In `.mcp.json` at the project root, to be committed",
                "B": "In the project's `.claude/settings.local.json`",
                "C": "In `~/.claude.json`, at the top level, for all your projects",
                "D": "In `~/.claude.json`, under this project's path",
            },
            answer="D",
            explanation=(
                "**D.** `local` is the default scope: stored in `~/.claude.json`, tied to the current project's path, not "
                f"shared through git ({SCOPES}). **A** is project scope (`--scope project`). **B** is a different file: local "
                f"MCP scope is not the general local settings file `.claude/settings.local.json` ({DOCS_SCOPES}). **C** "
                "is user scope (`--scope user`)."
            ),
        ),
        Question(
            id="q04",
            theme="scopes",
            text=(
                "Your team wants every developer who clones the repository to get the team's Jira MCP server, with "
                "nothing secret in git. What do you do?"
            ),
            options={
                "A": "`claude mcp add --scope user ...` on your machine, and ask each teammate to run the same command on theirs",
                "B": "`claude mcp add --scope project ...`, then commit `.mcp.json` with any token as a `${VAR}` reference",
                "C": "`claude mcp add --scope local ...`, then commit `~/.claude.json`",
                "D": "Put the Jira token into `.mcp.json` itself, so that the server works for everyone right after cloning",
            },
            answer="B",
            explanation=(
                "**B.** Team tools (Jira, internal APIs, the team's deploy bot) belong in project scope: `.mcp.json` at the "
                f"repository root, committed ({SCOPES}); `.mcp.json` is shared and `~/.claude.json` is private "
                f"({EMPHASES}), so the token stays out as a `${{VAR}}` reference. **A** works only by hand on each machine "
                "and is not shared. **C**: `~/.claude.json` is in your home folder, private, and holds your other "
                "projects too. **D** commits a secret."
            ),
        ),
        Question(
            id="q05",
            theme="scopes",
            text=(
                "You want your personal notes MCP server in **every** project on your machine, without your teammates "
                "ever seeing it. Which scope?"
            ),
            options={
                "A": "local",
                "B": "project",
                "C": "user",
                "D": "A plugin, since only plugins load in every project",
            },
            answer="C",
            explanation=(
                "**C.** User scope is stored in `~/.claude.json`, shared with no one, and loads in all your projects: your "
                f"scratch database, your notes server ({SCOPES}). **A** loads in one project only. **B** is committed and "
                "reaches the whole team. **D** is wrong: user scope already loads everywhere, no plugin needed."
            ),
        ),
        Question(
            id="q06",
            theme="scopes",
            text=(
                "A teammate commits a new server to `.mcp.json`. After `git pull` you start Claude Code in the "
                "repository for the first time since. What happens to that server?"
            ),
            options={
                "A": "Claude Code asks you to approve it before it uses it",
                "B": "It connects at once: committed servers are trusted by the team",
                "C": "It is ignored until you copy it into `~/.claude.json`",
                "D": "Claude Code refuses to start until the teammate signs the file",
            },
            answer="A",
            explanation=(
                "**A.** Project-scope servers ask for the user's approval when the session first loads them "
                f"({SCHEMA}); until then `claude mcp list` shows them as pending approval, and a cloned repository "
                f"cannot approve its own servers through its committed settings ({DOCS_APPROVAL}). **B** skips the "
                "approval that protects you from a repository's servers. **C** and **D** invent steps that do not exist."
            ),
        ),
        Question(
            id="q07",
            theme="scopes",
            text=(
                "Last week you rejected a project server of `.mcp.json` by mistake. How do you get Claude Code to ask "
                "you again?"
            ),
            options={
                "A": "Delete `.mcp.json` and check it out again",
                "B": "Nothing: an approval choice is permanent",
                "C": "`claude mcp add --scope project` with the same name",
                "D": "`claude mcp reset-project-choices`",
            },
            answer="D",
            explanation=(
                "**D.** Your approval choices for project servers are reset with `claude mcp reset-project-choices` "
                f"({SCHEMA}; {DOCS_SCOPES}). **A** and **C** change the file, not your recorded choice, which is kept outside "
                "the repository. **B** is wrong: that command exists for exactly this."
            ),
        ),
        Question(
            id="q08",
            theme="scopes",
            text=("You add a remote server that speaks Streamable HTTP to `.mcp.json` by hand. Which entry is right?"),
            options={
                "A": '`{"type": "http", "command": "https://mcp.example.com/mcp"}`',
                "B": '`{"type": "http", "url": "https://mcp.example.com/mcp"}`',
                "C": '`{"url": "https://mcp.example.com/mcp"}`: a URL says it is remote',
                "D": '`{"type": "stdio", "url": "https://mcp.example.com/mcp"}`',
            },
            answer="B",
            explanation=(
                "**B.** Each entry's `type` is `stdio`, `http` (alias `streamable-http`) or `sse`; a stdio entry takes "
                f"`command` with optional `args` and `env`, an http or sse entry takes `url` with optional `headers` "
                f"({SCHEMA}). **A** puts the URL in the stdio field. **C** leaves out `type`: Claude Code reads an entry "
                "without `type` as stdio and skips one that has a `url` instead of a `command` (*Claude Code docs, "
                "MCP › Installing MCP servers*). **D** gives a stdio server a URL."
            ),
        ),
        Question(
            id="q09",
            theme="scopes",
            text=(
                "You overrode `github` in your local scope in your usual checkout. You clone the same repository a "
                "second time, into another folder, and open Claude Code there. Is your override active?"
            ),
            options={
                "A": "Yes: local scope follows the repository, wherever and however often it is cloned",
                "B": "Yes, as long as the clone has the same git remote",
                "C": "No: local scope is stored under the path of the project where you added it",
                "D": "No: a local-scope server lasts one session",
            },
            answer="C",
            explanation=(
                "**C.** Local scope is stored in `~/.claude.json` tied to the current project's path and loads only in that "
                f"project ({SCOPES}; {DOCS_SCOPES}), so another folder does not see it: there the team's `github` "
                "from `.mcp.json` applies. **A** and **B** confuse local scope with something kept in the repository. **D** is "
                "wrong: it is stored in a file and lasts until you remove it."
            ),
        ),
        Question(
            id="q10",
            theme="scopes",
            text=(
                "You have a **user**-scope server named `github`. You enable a plugin that ships an MCP server also "
                "named `github`, pointing at a different URL. By the exam guide's precedence rule, which `github` "
                "definition is used?"
            ),
            options={
                "A": "Your user-scope one: user scope ranks above plugin servers",
                "B": "The plugin's: a plugin is installed later, so it overrides",
                "C": "Neither: a name clash between a scope and a plugin blocks both",
                "D": "Whichever connects first at start-up",
            },
            answer="A",
            explanation=(
                "**A.** The exam guide's ladder is by name: local, then project, then user, then plugin servers, then "
                f"claude.ai connectors ({SCOPES}), so your user-scope `github` wins. **B** inverts the ladder. **C** and **D** "
                "invent rules: the ladder settles every clash, and nothing depends on timing."
            ),
            claude_code=(
                "Claude Code (2.1.332, and its docs) matches duplicates by name only within the local, project and "
                "user scopes. A plugin's server is registered as `plugin:<plugin>:<server>` and de-duplicated by "
                "endpoint: one with a different URL is not a duplicate, so both load, your `github` and "
                "`plugin:<plugin>:github` (*Claude Code docs, MCP › Scope hierarchy and precedence*). On the exam, "
                "answer with the guide's ladder."
            ),
        ),
    ],
)
