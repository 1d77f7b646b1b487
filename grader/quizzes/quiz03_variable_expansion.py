"""Quiz 3: `${VAR}` expansion. Scenario questions on lesson 03, keyed to the exam guide."""

from __future__ import annotations

from grader.quizzes.model import Question, Quiz

GUIDE = "*Exam guide › Environment variable expansion*"
EMPHASES = "*Exam guide › Exam emphases*"
SCOPES = "*Exam guide › Scopes: local / project / user*"
DOCS = "*Claude Code docs, MCP › Environment variable expansion in `.mcp.json`*"
DOCS_EMPTY = "*Claude Code docs, MCP › Variables set to an empty string*"
DOCS_SHOWN = "*Claude Code docs, MCP › How references are shown in `/mcp` and CLI output*"
DOCS_PLUGINS = "*Claude Code docs, MCP › MCP servers provided by plugins*"

QUIZ = Quiz(
    name="quiz03_variable_expansion",
    title="Quiz 3: Variable expansion",
    intro=(
        "Nine scenario questions on lesson 03: the two forms `${VAR}` and `${VAR:-default}`, where they apply, "
        "unset and empty variables, credentials, `CLAUDE_PROJECT_DIR`, and what expansion is for. Each question has "
        "one best answer, the one the exam guide gives. Your answers are graded when you submit; the feedback "
        "explains every answer and, where Claude Code behaves differently from the exam guide, says what it does."
    ),
    questions=[
        Question(
            id="q01",
            theme="expansion",
            text=(
                'A server\'s `url` is `"${API_BASE_URL:-https://api.example.com}/mcp"`. The CI runner exports '
                "`API_BASE_URL` as an **empty string** (a secret the project never defined). What does the url "
                "become?"
            ),
            options={
                "A": "`https://api.example.com/mcp`: an empty variable counts as unset",
                "B": "`/mcp`: an empty string is a value, so the default is not used",
                "C": "Parsing fails, because the variable is empty",
                "D": "The text `${API_BASE_URL:-https://api.example.com}/mcp`, unchanged",
            },
            answer="B",
            explanation=(
                "**B.** `${VAR:-default}` gives the value of `VAR` if it is set, otherwise the default "
                f"({GUIDE}). A variable set to the empty string is set, so the url becomes `/mcp`, which is not a "
                f"valid URL; unset the variable to get the default ({DOCS_EMPTY}). **A** is the shell habit of treating "
                "empty as missing. **C** and **D** describe an unset variable without a default, not this case."
            ),
        ),
        Question(
            id="q02",
            theme="expansion",
            text=(
                "A project's `.mcp.json` has an http server whose header is "
                '`"Authorization": "Bearer ${ANTHROPIC_API_KEY:-none}"`, and your Anthropic key is exported in '
                "your shell. What does that server receive?"
            ),
            options={
                "A": "`Bearer <your key>`",
                "B": "`Bearer none`",
                "C": "`Bearer ${ANTHROPIC_API_KEY:-none}`, with a missing-variable warning",
                "D": "`Bearer ` with nothing after it, so it usually answers 401",
            },
            answer="D",
            explanation=(
                "**D.** In a remote server's `url` and `headers`, Claude Code reads its own and your cloud provider's "
                "credential variables as empty, set or not, and ignores their `:-default`, so that a project's "
                f"`.mcp.json` or a plugin cannot send them to a server of its choosing ({DOCS}). **A** is what a plain "
                "variable would give. **B** assumes the default applies; it is ignored for these names. **C** describes an "
                "unset ordinary variable."
            ),
        ),
        Question(
            id="q03",
            theme="expansion",
            text=(
                "You really do want your own LLM gateway, an http MCP server, to receive the value of your "
                "`ANTHROPIC_AUTH_TOKEN` in a header. What works?"
            ),
            options={
                "A": "Copy it into a variable of your own, `MY_GATEWAY_TOKEN`, and reference `${MY_GATEWAY_TOKEN}`",
                "B": "Add a `:-default` to the reference, so that the value falls back to the token you type there",
                "C": "Paste the token into `.mcp.json`",
                "D": "Nothing: Claude Code never sends that value to any server, whatever the configuration says",
            },
            answer="A",
            explanation=(
                "**A.** A name outside the covered credential set expands as written, so copying the value into a "
                f"variable with your own name is the documented way ({DOCS}); it is a deliberate act of yours, "
                "which a cloned file cannot do. **B**: the default of a covered name is ignored. **C** commits a secret "
                f"({EMPHASES}). **D** is wrong: the copy works."
            ),
        ),
        Question(
            id="q04",
            theme="expansion",
            text=(
                'A committed `.mcp.json` passes `"${DATABASE_URL_RO}"` in a stdio server\'s `args`, with no default. '
                "On a fresh machine nobody has exported `DATABASE_URL_RO`. By the exam guide's rule, what happens?"
            ),
            options={
                "A": "The argument becomes the empty string and the server starts",
                "B": "That one server is silently dropped; the others load",
                "C": "Parsing the configuration fails: `${VAR}` without a default requires the variable to be set",
                "D": "The server loads with the text `${DATABASE_URL_RO}` as written, and a warning names the variable",
            },
            answer="C",
            explanation=(
                "**C.** The exam guide gives two forms: `${VAR}`, the value of `VAR`, where parsing fails if the variable "
                f"is not set, and `${{VAR:-default}}`, which falls back to the default ({GUIDE}). That is the answer "
                "the exam expects. **A** and **B** invent behaviours no source describes. **D** is what Claude Code itself "
                "does today, not the exam guide's answer."
            ),
            claude_code=(
                "Claude Code (2.1.332, and its docs) loads the configuration anyway: the unexpanded text "
                "`${DATABASE_URL_RO}` is used as it is, and `claude mcp list` and `/mcp` show a missing-variable "
                "warning naming `DATABASE_URL_RO` (*Claude Code docs, MCP › Environment variable expansion in "
                "`.mcp.json`*). Either way, set the variable or add a `:-default`. On the exam, answer "
                '"parsing fails".'
            ),
        ),
        Question(
            id="q05",
            theme="expansion",
            text=(
                '`"args": ["${CLAUDE_PROJECT_DIR}/tools/server.py"]` works in a plugin\'s MCP configuration, but in '
                "your project's `.mcp.json` the server is started with the literal text. Why, and what do you write "
                "there?"
            ),
            options={
                "A": "Project servers cannot use variables; write an absolute path",
                "B": "It is set in the server's environment, not in Claude Code's; write `${CLAUDE_PROJECT_DIR:-.}`",
                "C": "`.mcp.json` is expanded only after the server has started, so nothing in the file needs to change",
                "D": "The variable is reserved for plugins; rename it to `PROJECT_DIR` and export that in your shell profile",
            },
            answer="B",
            explanation=(
                "**B.** `${CLAUDE_PROJECT_DIR}` is set in the server's environment, not in Claude Code's own, so at the top "
                f"level of `command` or `args` you usually need the default `${{CLAUDE_PROJECT_DIR:-.}}` ({GUIDE}); a "
                f"plugin's configuration has it substituted directly ({DOCS_PLUGINS}). **A** is wrong twice: variables "
                "work, and an absolute path exists on one machine only. **C** inverts the order: the configuration is "
                "expanded before the server starts. **D** invents a rule."
            ),
        ),
        Question(
            id="q06",
            theme="expansion",
            text="In which parts of a server entry does Claude Code expand `${VAR}`?",
            options={
                "A": "In `command`, `args`, `env`, `url` and `headers`",
                "B": "In every string of the file, the server's name and `type` included",
                "C": "Only in `env` and `headers`, where secrets live",
                "D": "Only in `url`",
            },
            answer="A",
            explanation=(
                f"**A.** Expansion works in `command`, `args`, `env`, `url` and `headers` ({GUIDE}; {DOCS}). **B** is wrong: "
                "the server's name is a key, not a value, and `type` is not one of these fields, so a transport "
                "cannot be chosen by a variable. **C** and **D** leave out fields where paths and URLs often need a "
                "variable."
            ),
        ),
        Question(
            id="q07",
            theme="expansion",
            text="Your team shares a GitHub MCP server that needs each developer's personal access token. What goes into git?",
            options={
                "A": "The token itself, since the repository is private",
                "B": "`.mcp.json` with `${GITHUB_PERSONAL_ACCESS_TOKEN:-<the team's token>}`, so that it works even where nobody exported it",
                "C": "Nothing: each developer adds the server by hand in user scope",
                "D": "`.mcp.json` with `Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}`; each shell, CI runner or 1Password CLI holds the value",
            },
            answer="D",
            explanation=(
                "**D.** Commit `.mcp.json` with placeholders and keep the real tokens in each developer's shell, in the CI "
                f"runner or in 1Password CLI ({GUIDE}); expansion exists to keep secrets out of git ({EMPHASES}). **A** "
                "commits a secret, private or not. **B** commits it too: a default is part of the file. **C** gives up the "
                f"shared project scope the team needs ({SCOPES})."
            ),
        ),
        Question(
            id="q08",
            theme="expansion",
            text=(
                "`claude mcp get github` shows `Authorization: Bearer ${GITHUB_PERSONAL_ACCESS_TOKEN}`. What does that "
                "tell you about the variable?"
            ),
            options={
                "A": "It is unset: a variable that is set would be shown expanded to its value in this output",
                "B": "It was read as empty, the way credential variables are toward a remote server",
                "C": "Nothing about that: these views show a reference by its name, never its value",
                "D": "That the server is a plugin's",
            },
            answer="C",
            explanation=(
                "**C.** For servers in local, project and user scope, `/mcp`, `claude mcp list` and `claude mcp get` show a "
                f"`${{VAR}}` reference by name, not its resolved value, so no secret is printed ({DOCS_SHOWN}). Look "
                "for the missing-variable warning to learn whether it is set. **A** and **B** read meaning into a display "
                "that never resolves. **D** is unrelated: a plugin's server is named `plugin:<plugin>:<server>`."
            ),
        ),
        Question(
            id="q09",
            theme="expansion",
            text=(
                'A teammate proposes a committed `.mcp.json` entry with `"type": "${TRANSPORT:-stdio}"` and '
                '`"env": {"DESK_ROLE": "${DESK_ROLE:-agent}"}`, so that each run can switch transport and role '
                "by exporting variables. What does the exam guide say about this use of `${VAR}`?"
            ),
            options={
                "A": "Not for runtime configuration logic: expansion keeps secrets out of git; override in local scope",
                "B": "It is the intended use: `${VAR:-default}` exists so that one committed file can act as a set of feature switches",
                "C": "It is fine as long as every reference has a default, so that the file still parses on every machine",
                "D": "It is fine if the defaults are nested, like `${A:-${B}}`, to pick a fallback",
            },
            answer="A",
            explanation=(
                "**A.** `${VAR}` and `${VAR:-default}` keep secrets out of git; they are not for runtime configuration logic "
                f"({EMPHASES}). To differ from the team's configuration, a developer overrides the entry in local "
                f"scope, which wins over project scope without editing `.mcp.json` ({SCOPES}). **B** and **C** treat "
                "expansion as a switchboard, which is what the guide warns against. **D** adds logic the two forms do "
                "not have: there are only a value and a fallback."
            ),
        ),
    ],
)
