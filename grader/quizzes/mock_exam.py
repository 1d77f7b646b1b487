"""The mock exam: 36 scenario questions on all five themes, mixing task statements 2.2 and 2.4, keyed to the exam guide."""

from __future__ import annotations

from grader.quizzes.model import Question, Quiz

# The sections the explanations cite, named as docs/sources.md lists them.
TAXONOMY = "*Exam guide › Error category taxonomy*"
IS_ERROR = "*Exam guide › The `isError` flag: schema and example*"
TREE = "*Exam guide › Retryable vs non-retryable decision tree*"
RECOVERY = "*Exam guide › Local recovery in the subagent vs escalation to the coordinator*"
COVERS = "*Exam guide › What this section covers*"
OVERVIEW = "*Exam guide › MCP at 30,000 feet*"
SCOPES = "*Exam guide › Scopes: local / project / user*"
SCHEMA = "*Exam guide › The `.mcp.json` schema (with an example)*"
EXPANSION = "*Exam guide › Environment variable expansion*"
VERIFY = "*Exam guide › Verifying the connection (`/mcp`)*"
TOOLS_RESOURCES = "*Exam guide › MCP tools vs MCP resources*"
COMMUNITY = "*Exam guide › Choosing community vs custom servers*"
EMPHASES = "*Exam guide › Exam emphases*"
DOCS_INSTALL = "*Claude Code docs, MCP › Installing MCP servers*"
DOCS_STATUS = "*Claude Code docs, MCP › Server status*"
DOCS_APPROVAL = "*Claude Code docs, MCP › Approval of project servers and workspace trust*"
DOCS_WARNINGS = "*Claude Code docs, MCP › Configuration warnings*"
DOCS_RECONNECT = "*Claude Code docs, MCP › Automatic reconnection*"
DOCS_PLUGINS = "*Claude Code docs, MCP › MCP servers provided by plugins*"
DOCS_SCOPES = "*Claude Code docs, MCP › MCP installation scopes*"
DOCS_LADDER = "*Claude Code docs, MCP › Scope hierarchy and precedence*"
DOCS_EXPANSION = "*Claude Code docs, MCP › Environment variable expansion in `.mcp.json`*"
DOCS_EMPTY = "*Claude Code docs, MCP › Variables set to an empty string*"
DOCS_AUTH = "*Claude Code docs, MCP › Authenticating with remote MCP servers*"
DOCS_LONG_NAMES = "*Claude Code docs, MCP › Tools with names longer than 128 characters*"
DOCS_RESOURCES = "*Claude Code docs, MCP › Using MCP resources*"
DOCS_TOOL_SEARCH = "*Claude Code docs, MCP › Scaling with MCP tool search*"
DOCS_SEARCH_AUTHORS = "*Claude Code docs, MCP › Tool search for MCP server authors*"
DOCS_SEARCH_CONFIG = "*Claude Code docs, MCP › Configuring tool search*"
DOCS_NO_DEFERRAL = "*Claude Code docs, MCP › Excluding a server from deferral*"
DOCS_PROMPTS = "*Claude Code docs, MCP › Using MCP prompts as commands*"
MISTAKES_VERSIONS = '*Common mistakes › 1.1 "Unrecognized field": client and server on different protocol versions*'
MISTAKES_TRANSPORT = (
    "*Common mistakes › 1.2 MCP Inspector does not connect: the server was added as stdio instead of Streamable HTTP*"
)
MISTAKES_READ_ONLY = "*Common mistakes › 2.3 Tools without a read-only mark*"
MISTAKES_CONTEXT = "*Common mistakes › 4.5 A whole article in the answer eats the client's context*"
MISTAKES_DESCRIPTIONS = "*Common mistakes › 5.2 Vague descriptions: the model does not call the tool*"

INTRO = """\
Thirty-six scenario questions in the style of the exam's questions on MCP integration. They cover both task
statements, 2.2 (structured error responses) and 2.4 (server integration), mixed as on the exam. Each question has
four options and one best answer.

Answer from what you know, without the lessons open: the score is most useful as an honest measure. The key follows
the exam guide. On the few points where Claude Code behaves differently today, the feedback gives the exam's answer
and then says what Claude Code does instead.

Each theme is one lesson's subject: structured tool errors (lesson 01), server scopes (02), variable expansion
(03), tools, resources and prompts (04), server integration (05 and 05b). Your points per theme show which
lessons to revisit.
"""

QUESTIONS = [
    Question(
        id="q01",
        theme="errors",
        text=(
            "A subagent's `issue_refund` tool can fail in four ways. Following the exam guide's error taxonomy, "
            "which failure should come back with `isRetryable: true`?"
        ),
        options={
            "A": "The requested refund of 750 dollars exceeds the 500-dollar single-transaction limit.",
            "B": 'The `currency` argument is `"EURO"`, which is not one of the allowed values.',
            "C": "The payment gateway timed out after 30 seconds.",
            "D": "The caller's token lacks the `refunds:write` scope.",
        },
        answer="C",
        explanation=(
            "A timeout is `transient` (like a 5xx, a rate limit or a reset connection), the one category "
            f"whose typical `isRetryable` is `true`: the subagent backs off and retries locally ({TAXONOMY}). The "
            "other three are `isRetryable: false`. **A** is `business` (a policy, limit or state rule): show the "
            "customer the explanation and stop. **B** is `validation` (a schema mismatch or a bad enum value): fix "
            "the input instead of replaying the call. **D** is `permission` (401/403, a missing scope, an RBAC "
            "denial): escalate to the coordinator or a human."
        ),
    ),
    Question(
        id="q02",
        theme="scopes",
        text=(
            "You are setting up three servers: the team's Jira server, which everyone on the team should get; your "
            "scratch database, which you want in every project on your laptop; and an experiment with your personal "
            "API key, to try in this one project only. Which scopes fit?"
        ),
        options={
            "A": "Jira: project; scratch database: user; experiment: local.",
            "B": "Jira: user, added by each developer; scratch database: local; experiment: project.",
            "C": "Jira: project; scratch database: local; experiment: user.",
            "D": "Jira: local; scratch database: project; experiment: user.",
        },
        answer="A",
        explanation=(
            "Project scope is `.mcp.json` at the repository root, committed and shared through git: team tools "
            "such as Jira. User scope lives in `~/.claude.json`, loads in all your projects and is not shared: "
            "personal utilities you need everywhere, such as your scratch database. Local scope, the default, is "
            "also in `~/.claude.json` but tied to the current project: personal or experimental servers and "
            f"secrets you would rather not share ({SCOPES}). **B** makes each developer repeat the team's setup, "
            "and commits your experiment for everyone. **C** swaps user and local: the scratch database would load "
            "in one project only, and the experiment, with your key, in all of them. **D** puts your scratch "
            "database in the team's committed file and keeps the team's Jira to yourself."
        ),
    ),
    Question(
        id="q03",
        theme="primitives",
        text=(
            "An incident-management MCP server offers a tool `create_incident`, a resource `incidents://open` "
            "listing the open incidents, and a prompt `/summarize-incident`. Who controls each primitive?"
        ),
        options={
            "A": "The model controls all three; the kind of primitive only changes the message format on the wire.",
            "B": "Tool: the user; resource: the model; prompt: the application.",
            "C": "Tool: the model; resource: the model; prompt: the application.",
            "D": "Tool: the model; resource: the application or user; prompt: the user.",
        },
        answer="D",
        explanation=(
            "Tools are model-controlled actions that may have side effects; resources are read-only content "
            "identified by a URI and controlled by the application or user; prompts are ready-made templates the "
            f"user invokes, such as slash commands or menu items ({OVERVIEW}; {EMPHASES}). **A** erases the "
            "distinction the exam tests. **B** swaps the tool and the resource. **C** hands the resource to the "
            "model and the prompt to the application; a prompt runs because the user chose it."
        ),
        claude_code=(
            "besides the `@` mention with which you attach a resource (`@<server>:incidents://open`), it gives "
            "Claude tools to list and read MCP resources, so the model can also fetch one itself. Prompts appear as "
            f"commands such as `/mcp__<server>__summarize-incident` ({DOCS_RESOURCES}; {DOCS_PROMPTS})."
        ),
    ),
    Question(
        id="q04",
        theme="expansion",
        text=(
            'The team\'s `.mcp.json` has `"url": "${API_BASE_URL:-https://api.example.com}/mcp"`. A new developer '
            "has never set `API_BASE_URL`. Which URL does Claude Code use for her?"
        ),
        options={
            "A": "The text `${API_BASE_URL:-https://api.example.com}/mcp`, unchanged",
            "B": "`https://api.example.com/mcp`",
            "C": "`/mcp`, because an unset variable expands to an empty string",
            "D": "None: parsing fails because `API_BASE_URL` is not set",
        },
        answer="B",
        explanation=(
            "`${VAR:-default}` gives the value of `VAR` when it is set and `default` otherwise, and expansion "
            f"applies in `url` ({EXPANSION}). **A**: the reference is expanded, not kept. **C**: an unset variable "
            "takes the default; only a variable set to the empty string counts as set and would give `/mcp` "
            f'({DOCS_EMPTY}). **D**: "parsing fails" is the exam guide\'s rule for `${{VAR}}` *without* a default; '
            "the `:-` form exists so that a missing variable is fine."
        ),
    ),
    Question(
        id="q05",
        theme="integration",
        text=(
            "Your MCP server may ask the user for input through elicitation, but only when the connected client "
            "supports it. How does the server learn what the client supports?"
        ),
        options={
            "A": 'It sends an elicitation request on every call and treats an error reply as "not supported".',
            "B": "From the capabilities the client declares in `initialize`, when the stateful session starts.",
            "C": "From the client's `.mcp.json` entry, which Claude Code sends to the server as its first message.",
            "D": "From the `User-Agent` header that comes with each stateless REST request to the server.",
        },
        answer="B",
        explanation=(
            "MCP is an open protocol on JSON-RPC 2.0 that connects hosts to servers through a stateful "
            "session with capability negotiation: in `initialize`, client and server declare what they support, "
            f"and that holds for the session ({OVERVIEW}). The same exchange is where a strict server can trip over "
            f"a newer client's capabilities ({MISTAKES_VERSIONS}). **A** probes blindly and can fail in the middle "
            "of a task. **C**: the configuration stays with the client; the server only sees protocol messages. "
            "**D** describes a stateless REST API, not MCP's stateful JSON-RPC session."
        ),
    ),
    Question(
        id="q06",
        theme="errors",
        text=(
            "Your `search_tickets` tool calls an upstream API, which answers `429 Too Many Requests`. How should "
            "the tool report this to the agent?"
        ),
        options={
            "A": "Let the exception propagate, so that the client receives a JSON-RPC error response.",
            "B": '`{"isError": true, "content": [{"type": "text", "text": "Operation failed"}]}`, keeping internal '
            "details private.",
            "C": '`isError: false` with the text "Rate limited, try again later", since the tool itself ran fine.',
            "D": "`isError: true`, a text saying what failed, and `structuredContent` with `errorCategory: "
            '"transient"` and `isRetryable: true`.',
        },
        answer="D",
        explanation=(
            f"A rate limit is a `transient` error ({TAXONOMY}). Errors that come from the tool itself are reported "
            "inside the `CallToolResult` with `isError: true` (the flag defaults to false), and `structuredContent` "
            f"carries `errorCategory` and `isRetryable`, so the agent knows to back off and retry ({IS_ERROR}). "
            "**A**: a JSON-RPC protocol error is invisible to the model, which must see the failure to recover. "
            "**B** is the exam guide's canonical wrong answer: with no category and no retryability, the agent "
            f"retries blindly or gives up ({EMPHASES}). **C** reports a failure as a success, so the agent follows "
            "the success path and may present the text as the answer."
        ),
    ),
    Question(
        id="q07",
        theme="primitives",
        text=(
            "Your server's `run_sql(query)` only runs `SELECT` statements against a read replica. A colleague "
            "argues that since it never changes state, it should be a resource. What is right?"
        ),
        options={
            "A": "Keep it a tool: the model decides when to call it and reasons about its `query`.",
            "B": "Make it a resource: whatever only reads data and never changes state belongs in resources.",
            "C": "Make it a prompt, so that the user writes each query.",
            "D": "Make it a resource template `sql://{query}`, so that each query becomes a URI clients can cache.",
        },
        answer="A",
        explanation=(
            "A tool is model-controlled: use one when the agent must decide whether to do something, and "
            "for anything that changes state, calls an external API or takes arguments the model must reason "
            f"about. The exam guide lists `run_sql(query)` among its tool examples ({TOOLS_RESOURCES}). Mark it "
            f"`readOnlyHint: true` so clients know it changes nothing ({MISTAKES_READ_ONLY}). **B**: being "
            "read-only is required of a resource, but it is not enough; a resource is content at a URI that the "
            "application attaches, not a query the model composes. **C**: a prompt is started by the user, so the "
            "agent could no longer query on its own. **D** still leaves the model composing the query, and a URI "
            "per query gives up the stable, cacheable content that resources are for."
        ),
    ),
    Question(
        id="q08",
        theme="scopes",
        text=(
            "The repository's `.mcp.json` defines `jira` for the team. You want to try a staging Jira endpoint "
            "yourself, in this project only, without changing anything for your teammates. What does the exam "
            "guide recommend?"
        ),
        options={
            "A": "Edit the `jira` entry in `.mcp.json` directly, and take care never to commit that change.",
            "B": "Add `jira` in user scope, since your personal configuration always beats the team's shared one.",
            "C": "Add `jira` in local scope, the default of `claude mcp add`; it overrides the project's entry.",
            "D": "Add a `jira-staging` entry next to `jira` in `.mcp.json` and ask your teammates to ignore it.",
        },
        answer="C",
        explanation=(
            "When one server name exists in several scopes, local wins, then project, then user, then plugin "
            "servers, then claude.ai connectors. This order lets a developer override the team's configuration "
            f"locally without editing `.mcp.json` ({SCOPES}). **A** works only until someone commits by mistake, "
            "which is what the precedence is there to avoid. **B** fails: user scope ranks below project scope, so "
            "the team's `jira` still wins. **D** changes the shared file for everyone."
        ),
    ),
    Question(
        id="q09",
        theme="errors",
        text=(
            "You review an MCP server's error handling. In which case should it answer a `tools/call` request "
            "with a JSON-RPC protocol error instead of a result with `isError: true`?"
        ),
        options={
            "A": "The tool's upstream API is down, so the failure is not the tool's own fault.",
            "B": "The arguments fail the tool's validation, for example an unknown enum value.",
            "C": "The error is not retryable, so the agent must not try again.",
            "D": "The request names a tool that the server does not have.",
        },
        answer="D",
        explanation=(
            'Protocol errors are reserved for cases such as "tool not found" or a server that does not '
            "support tool calls. Errors that come from the tool itself go inside the result with `isError: true`, "
            "because protocol errors are invisible to the model, and the model must see a failure to correct "
            f"itself ({IS_ERROR}; {EMPHASES}). **A** is a `transient` tool error. **B** is a `validation` tool "
            "error: the model needs its message to re-plan with corrected input. **C** confuses retryability with "
            "the reporting channel: a non-retryable error still goes in the result, with `isRetryable: false`."
        ),
    ),
    Question(
        id="q10",
        theme="integration",
        text=(
            "Your team needs two servers: (1) a wrapper around a command-line tool that must read files on each "
            "developer's laptop, and (2) a hosted internal service at `https://mcp.corp.example.com/mcp`. Which "
            "transports fit?"
        ),
        options={
            "A": '(1) stdio, a local subprocess that Claude Code starts; (2) Streamable HTTP (`"type": "http"`).',
            "B": "(1) stdio; (2) SSE, because a remote server has to stream server-sent events to the client.",
            "C": "(1) Streamable HTTP on `localhost`, since stdio is the deprecated transport; (2) Streamable HTTP.",
            "D": "Either one for both: the transport changes speed, not how the client reaches the server.",
        },
        answer="A",
        explanation=(
            "The specification defines stdio (a local subprocess), Streamable HTTP (`streamable-http` in the "
            "specification, `http` in Claude Code's configuration) and the deprecated SSE transport "
            f"({OVERVIEW}). A local process that needs direct access to the machine is a stdio server; a server "
            "with an address is Streamable HTTP, the recommended transport for remote servers "
            f"({DOCS_INSTALL}; {MISTAKES_TRANSPORT}). **B** picks the deprecated transport; Streamable HTTP "
            "streams too. **C** has it backwards: SSE is deprecated, not stdio. **D**: with stdio the client starts "
            "the server itself; with HTTP it connects to a server already running at a URL."
        ),
    ),
    Question(
        id="q11",
        theme="expansion",
        text=(
            'A stdio server in the team\'s `.mcp.json` has `"env": {"JIRA_API_TOKEN": "${JIRA_API_TOKEN}"}`. A new '
            "teammate has not exported `JIRA_API_TOKEN` yet. According to the exam guide, what happens when Claude "
            "Code loads this configuration?"
        ),
        options={
            "A": "The server starts with `JIRA_API_TOKEN` set to an empty string.",
            "B": "Claude Code asks the teammate for `JIRA_API_TOKEN` at start-up.",
            "C": "Parsing fails: `${VAR}` without a default needs the variable to be set.",
            "D": "Claude Code reads `JIRA_API_TOKEN` from a `.env` file in the repository.",
        },
        answer="C",
        explanation=(
            "The exam guide defines `${VAR}` as the value of `VAR`, with parsing failing when the variable is not "
            f"set; `${{VAR:-default}}` is the form for a value that may be missing ({EXPANSION}). Give this answer "
            "on the exam. **A**: an unset variable is not an empty one. **B**: expansion never asks anyone "
            "anything. **D**: values come from the environment Claude Code runs in, not from files in the "
            "repository."
        ),
        claude_code=(
            "it loads the configuration anyway (its docs say so, and 2.1.332 was observed doing it): the server "
            "starts with `JIRA_API_TOKEN` set to the literal text `${JIRA_API_TOKEN}`, and `claude mcp list` and "
            "`/mcp` warn by name (`Missing environment variables: JIRA_API_TOKEN`). Set the variable or add a "
            f"`:-default` ({DOCS_EXPANSION}; {DOCS_WARNINGS})."
        ),
    ),
    Question(
        id="q12",
        theme="errors",
        text=(
            'A subagent calls `create_ticket` and gets `isError: true` with `errorCategory: "validation"`, '
            '`isRetryable: false` and the text "priority must be one of low, normal, high; got urgent". '
            "What should it do?"
        ),
        options={
            "A": "Replay the same call with exponential backoff, up to the subagent's retry cap.",
            "B": "Call again with a valid priority: re-plan the input, do not replay the call.",
            "C": "Escalate to the coordinator, reporting the missing scope or role.",
            "D": "Show the error message to the customer and stop the task there.",
        },
        answer="B",
        explanation=(
            "The validation branch of the decision tree: re-plan with corrected input; do NOT replay the "
            f"same call ({TREE}). The message says exactly what to fix, which is why errors carry human-readable "
            "text as well as a category. **A** replays a call that fails the same way every time. **C** is the "
            "permission branch; nothing here is about access. **D** is the business branch; the customer broke no "
            "rule, the agent sent a bad value."
        ),
    ),
    Question(
        id="q13",
        theme="primitives",
        text=(
            'To answer "what is blocking the release?", the agent calls `list_issues`, then `get_issue` on each of '
            "the 40 results before it finds the two that matter. What does the exam guide recommend?"
        ),
        options={
            "A": "Expose a catalog resource, such as `issues://summary`, for the host to attach; then call "
            "`get_issue` only where it matters.",
            "B": "Let `get_issue` accept a list of ids, so that the 40 separate calls become a single batched one.",
            "C": "Make `list_issues` return the full body of every issue, so that no `get_issue` call is needed.",
            "D": "Raise the retry cap, so that the long chain of calls does not fail halfway through.",
        },
        answer="A",
        explanation=(
            "This is the content-catalog pattern: instead of `list_issues` followed by `get_issue` for every "
            "match (an exploratory N+1), the server exposes a resource such as `issues://summary` that the host "
            "can attach; the agent sees the catalog in context and makes the relevant `get_issue` call directly "
            f"({TOOLS_RESOURCES}). **B** saves round trips but still pulls all 40 bodies into context, and the "
            f"agent is still exploring. **C** floods the context with whole bodies ({MISTAKES_CONTEXT}). **D** "
            "treats a design problem as a reliability one."
        ),
    ),
    Question(
        id="q14",
        theme="scopes",
        text=(
            "A new hire clones the repository, whose `.mcp.json` lists three servers, and starts an interactive "
            "Claude Code session in it. Her own `~/.claude.json` holds one user-scope server. Which servers does "
            "Claude Code ask her to approve before using them?"
        ),
        options={
            "A": "All four: every server needs approval once, whatever its scope.",
            "B": "None: committed servers are trusted like the code, and her own server is hers.",
            "C": "Only her user-scope server, since no teammate has reviewed it.",
            "D": "The three from `.mcp.json`; `claude mcp reset-project-choices` later resets those choices.",
        },
        answer="D",
        explanation=(
            "Project-scope servers ask for the user's approval when a session first loads them, and "
            f"`claude mcp reset-project-choices` resets the choices ({SCHEMA}). The reason is security: the file "
            f"arrives with the repository, and a clone cannot approve its own servers ({DOCS_APPROVAL}); until she "
            f"approves them, `claude mcp list` shows them as pending approval ({DOCS_STATUS}). **A** and **C**: a "
            "server she configured herself, in user scope, needs no approval. **B**: a shared file that starts "
            "processes on her machine is exactly what needs her consent. In `claude -p` runs and Agent SDK "
            "sessions no prompt can be shown, so there Claude Code loads project servers without asking "
            f"({DOCS_SCOPES})."
        ),
    ),
    Question(
        id="q15",
        theme="integration",
        text=(
            "A teammate added three servers to the project. Inside a Claude Code session you want to see which ones "
            "are connected, how many tools, resources and prompts each declares, whether one needs authentication, "
            "and whether one is waiting in reconnection backoff. Where do you look?"
        ),
        options={
            "A": "The `Added ...` line that `claude mcp add` printed for each server.",
            "B": "`.mcp.json`: if it parses, every server in it is connected.",
            "C": "The `/mcp` view in the session.",
            "D": "The result of a first tool call to each server.",
        },
        answer="C",
        explanation=(
            "Inside Claude Code, `/mcp` lists every connected server with the number of tools, resources "
            "and prompts it declares, its authentication state and any current reconnection backoff; it is also "
            f"where OAuth starts ({VERIFY}). **A**: `Added ...` means the configuration was written, not that the "
            f"server connected ({DOCS_STATUS}). **B**: a file that parses says nothing about a server that fails to "
            "start or needs a login. **D** costs a call per server and still shows no counts, authentication state "
            "or backoff."
        ),
    ),
    Question(
        id="q16",
        theme="errors",
        text=(
            'A subagent calls `close_ticket` for PROJ-88 and gets `isError: true`, `errorCategory: "business"`, '
            '`isRetryable: false` and `customerMessage: "This ticket was already closed on 3 March."` What should '
            "it do?"
        ),
        options={
            "A": "Retry with backoff, in case the ticket's state was read from a stale replica.",
            "B": "Show the customer the `customerMessage`, stop, and not retry.",
            "C": "Reopen the ticket and then close it again, so that the call succeeds.",
            "D": "Escalate it as a `permission` error, with the missing role.",
        },
        answer="B",
        explanation=(
            '"Ticket already closed" is the exam guide\'s own example of a `business` error, a policy, limit or '
            f"state rule ({TAXONOMY}). The business branch of the decision tree: surface `customerMessage`; stop; "
            f"do NOT retry. A broken business rule breaks the same way on every attempt ({TREE}). **A** ignores "
            '`isRetryable: false`; retrying what cannot succeed is how runaway "tool storms" start. **C** works '
            "around the rule on the agent's own authority, rewriting the ticket's history to make a call succeed. "
            "**D** mislabels the error: the state of a ticket is not a missing scope."
        ),
    ),
    Question(
        id="q17",
        theme="expansion",
        text=(
            "A teammate puts `${VAR}` references in several places of a project's configuration. Which one does "
            "Claude Code expand?"
        ),
        options={
            "A": 'The server\'s key, as in `"${TEAM}-jira": { ... }`',
            "B": 'The transport, as in `"type": "${MCP_TRANSPORT}"`',
            "C": 'An argument, as in `"args": ["--dsn", "${DATABASE_URL_RO}"]`',
            "D": "A reference inside a JSON file that the server reads at start-up, whose path is given in `args`",
        },
        answer="C",
        explanation=(
            f"Expansion applies in `command`, `args`, `env`, `url` and `headers` ({EXPANSION}; "
            f"{DOCS_EXPANSION}). **A** and **B** are outside those fields: a server's name and its `type` stay as "
            "written, so a variable can neither rename a server nor choose its transport (observed in Claude Code "
            "2.1.332). **D**: Claude Code expands the configuration entry, not files the server opens later; the "
            "server reads that file's text as it is."
        ),
    ),
    Question(
        id="q18",
        theme="primitives",
        text=(
            'Analysts often begin with "which columns does `orders` have?", and the agent answers by calling a '
            "`describe_table` tool every time. The schema rarely changes. What does the exam guide suggest?"
        ),
        options={
            "A": "Expose the schema as a resource, such as `db://schema`, so the answer needs no tool call.",
            "B": "Keep `describe_table`, and mark it `readOnlyHint: true` so that the agent calls it sooner.",
            "C": "Copy the full schema into the description of every tool on the server, so it is always at hand.",
            "D": "Turn `describe_table` into a prompt that the model invokes when it needs the columns.",
        },
        answer="A",
        explanation=(
            "Schema introspection is the exam guide's second catalog example: exposing `db://schema` as a "
            'resource turns "which columns does orders have?" into an answer without a single tool call; '
            f"resources are read-only, addressed by URI and cache well ({TOOLS_RESOURCES}). **B**: a read-only hint "
            "tells clients the tool changes nothing; the call remains. **C** bloats every tool description, and "
            f"Claude Code cuts long descriptions short ({DOCS_SEARCH_AUTHORS}). **D**: the user invokes prompts, "
            "not the model."
        ),
    ),
    Question(
        id="q19",
        theme="integration",
        text=(
            "Mid-session, the connection to a remote HTTP server drops, and the process of a local stdio server "
            "crashes. According to the exam guide, what does Claude Code do?"
        ),
        options={
            "A": "It reconnects both, each up to five times with exponential backoff.",
            "B": "Neither comes back until you restart Claude Code.",
            "C": "It restarts the stdio server at once, since it is local and cheap; the HTTP server waits until "
            "you open `/mcp`.",
            "D": "The HTTP server reconnects automatically, up to five times with exponential backoff; the stdio "
            "one does not.",
        },
        answer="D",
        explanation=(
            "HTTP and SSE servers reconnect automatically up to five times with exponential backoff; stdio "
            "servers, being local subprocesses, are not reconnected, and `/mcp` shows any backoff in progress "
            f"({VERIFY}). **A** extends automatic reconnection to stdio. **B** forgets that remote servers "
            "reconnect. **C** reverses the rule."
        ),
        claude_code=(
            "in `claude -p` runs and Agent SDK sessions it restarts an exited stdio server the next time Claude "
            "calls one of its tools. In an interactive session it matches the exam guide: a remote server's first "
            "delay is one second and doubles each time, after five failures the server is marked failed, and a "
            f"stdio server that exited stays failed until you choose Reconnect in `/mcp` ({DOCS_RECONNECT})."
        ),
    ),
    Question(
        id="q20",
        theme="errors",
        text=(
            "A subagent asks `export_report` for last quarter's revenue report and gets `isError: true`, "
            '`errorCategory: "permission"`, `isRetryable: false` and the text "403: role finance-reader '
            'required". What should it do?'
        ),
        options={
            "A": "Escalate to the coordinator with the missing role, claiming nothing about the report.",
            "B": "Tell the user that there is no revenue report for last quarter.",
            "C": "Retry with backoff, because newly granted roles often take a minute to propagate.",
            "D": "Re-plan the request with a narrower date range and call again.",
        },
        answer="A",
        explanation=(
            "The permission branch of the decision tree: escalate to the coordinator with the missing scope or "
            f"role ({TREE}). **B** turns an access failure into an empty result; the agent learned nothing about the "
            f"report ({RECOVERY}). **C** retries an error marked `isRetryable: false`. **D** is the validation "
            "branch; no change of input grants a role."
        ),
    ),
    Question(
        id="q21",
        theme="scopes",
        text=(
            "You keep a `db` server in user scope that points at your scratch database. A repository you clone "
            "defines `db` in its `.mcp.json`, pointing at the team's read replica. Which `db` does Claude Code "
            "use in that project?"
        ),
        options={
            "A": "Yours: personal configuration beats shared configuration.",
            "B": "The project's: project scope ranks above user scope.",
            "C": "Both, as two servers named `db`.",
            "D": "One merged entry: the project's `url` with your user-scope `headers`.",
        },
        answer="B",
        explanation=(
            "For a name defined in several scopes, the order is local, then project, then user, then plugin "
            f"servers, then claude.ai connectors ({SCOPES}). **A** holds only for local scope, which sits above "
            "project scope; to use your own `db` here, add it in local scope. **C**: Claude Code connects to a name "
            "once, using the highest-priority definition. **D**: it uses that source's whole entry and never "
            f"merges fields across scopes ({DOCS_LADDER})."
        ),
    ),
    Question(
        id="q22",
        theme="expansion",
        text=(
            "Your CI pipeline runs Claude Code with the project's `.mcp.json`, whose remote `tracker` server needs "
            "a token in its `Authorization` header. Where should CI's token come from?"
        ),
        options={
            "A": "From `.mcp.json` itself: CI needs the value, and the repository is private.",
            "B": "From a default in the reference, `${TRACKER_TOKEN:-<the real token>}`, so that CI needs no setup.",
            "C": "From the CI runner's secret store, exported as `TRACKER_TOKEN`; `.mcp.json` keeps "
            "`${TRACKER_TOKEN}`.",
            "D": "From a `tokens.json` committed next to `.mcp.json`, which Claude Code merges in.",
        },
        answer="C",
        explanation=(
            "Commit `.mcp.json` with placeholders such as `${GITHUB_TOKEN}` and keep the real tokens in each "
            "developer's shell, in the CI runner or in 1Password CLI; expansion is there to keep secrets out of "
            f"git ({EXPANSION}; {EMPHASES}). **A**: a private repository still copies the token into every clone, "
            "fork and backup, and its history keeps it. **B** commits the token all the same, as the default. "
            "**D** commits it too, in another file, and Claude Code merges in no such file."
        ),
    ),
    Question(
        id="q23",
        theme="integration",
        text=(
            "A remote MCP server you added answers Claude Code with `401 Unauthorized` and a `WWW-Authenticate` "
            "header that points to its authorization server. The entry has no `Authorization` header. What is the "
            "intended next step?"
        ),
        options={
            "A": "Wait: the automatic reconnection attempts with backoff will clear the 401.",
            "B": "Put your personal token into the entry's `headers` in `.mcp.json` and commit it.",
            "C": "Treat it as a `permission` tool error and escalate to the coordinator.",
            "D": "Open `/mcp` and start the OAuth flow for that server there.",
        },
        answer="D",
        explanation=(
            "`/mcp` is where you start the OAuth flow for remote servers that answer 401/403 with a "
            f"`WWW-Authenticate` header ({VERIFY}). Claude Code marks such a server as needing authentication and "
            "finds its authorization server from that header; `claude mcp login <name>` starts the same flow from "
            f"a shell ({DOCS_AUTH}). **A**: retrying does not fix an authentication error; it needs a login "
            f"({DOCS_RECONNECT}). **B** commits a secret. **C** mixes layers: this is the connection's "
            "authentication, not a tool result carrying an `errorCategory`."
        ),
    ),
    Question(
        id="q24",
        theme="errors",
        text=(
            'A subagent\'s `get_rates` call times out on its first attempt (`errorCategory: "transient"`, '
            "`isRetryable: true`). A fallback endpoint exists, and a cached read from ten minutes ago is good "
            "enough for this task. What should the subagent do?"
        ),
        options={
            "A": "Escalate to the coordinator at once, since only the coordinator may decide whether to retry.",
            "B": "Recover locally: retry with backoff up to a cap, or use the fallback or the cached read.",
            "C": "Retry immediately, in a loop, until the call succeeds, since `isRetryable: true` says it is safe.",
            "D": "Return an empty result to the coordinator, so that the overall task can carry on without rates.",
        },
        answer="B",
        explanation=(
            "The subagent owns local recovery from transient failures: retry with backoff, switch to a "
            "fallback endpoint, or serve a stale cached read, with attempts capped (for example at 3); it escalates "
            f"only when the error is not retryable or the local budget is spent ({RECOVERY}; {TREE}). **A** pushes "
            'a recoverable error upward. **C** has neither backoff nor a cap: a runaway "tool storm". **D** passes '
            "a failure off as a valid empty result."
        ),
    ),
    Question(
        id="q25",
        theme="primitives",
        text=(
            "Your team wants a reusable code-review template on its `review` server. A developer invokes it "
            "deliberately, with a pull-request number; the agent should never start it on its own. Which primitive "
            "fits?"
        ),
        options={
            "A": "A tool `code_review(pr)` whose description tells the model to call it only when the user asks.",
            "B": "A resource `review://template` that the host attaches to every conversation.",
            "C": "A prompt, offered in Claude Code as a command such as `/mcp__review__code_review 456`.",
            "D": "A tool marked `readOnlyHint: true`, so that the client asks the user before every single call.",
        },
        answer="C",
        explanation=(
            "Prompts are user-controlled templates, invoked by the user's choice as slash commands or menu "
            f"items ({OVERVIEW}). Claude Code offers a server's prompts as commands and passes arguments separated "
            f"by spaces ({DOCS_PROMPTS}). **A** leaves the decision with the model, however the description is "
            "worded. **B** is context that the application attaches, not something anyone invokes. **D**: "
            "`readOnlyHint` says a tool changes nothing; it does not make a client ask the user."
        ),
    ),
    Question(
        id="q26",
        theme="scopes",
        text=(
            "The team's `.mcp.json` must start a Postgres server with `npx -y @modelcontextprotocol/server-postgres`, "
            "pass it the connection string from `DATABASE_URL_RO` as an argument, and set `PGSSLMODE=require`. "
            "Which entry follows the exam guide's schema?"
        ),
        options={
            "A": '`{"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", '
            '"${DATABASE_URL_RO}"], "env": {"PGSSLMODE": "require"}}`',
            "B": '`{"type": "stdio", "url": "npx -y @modelcontextprotocol/server-postgres ${DATABASE_URL_RO}", '
            '"headers": {"PGSSLMODE": "require"}}`',
            "C": '`{"type": "http", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", '
            '"${DATABASE_URL_RO}"], "env": {"PGSSLMODE": "require"}}`',
            "D": '`{"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres"], '
            '"headers": {"DATABASE_URL_RO": "${DATABASE_URL_RO}", "PGSSLMODE": "require"}}`',
        },
        answer="A",
        explanation=(
            "Every entry has a `type`: `stdio`, `http` (alias `streamable-http`) or `sse`. A stdio entry takes "
            "`command` with optional `args` and `env`; an http or sse entry takes `url` with optional `headers`. "
            f"This is the exam guide's own `postgres-readonly` example ({SCHEMA}). **B** gives a stdio server the "
            "fields of a remote one. **C** declares `http` but gives stdio's fields; an http entry needs a `url`. "
            "**D** puts the connection string and `PGSSLMODE` in `headers`, a field of remote servers; a stdio "
            "server gets its arguments from `args` and its environment from `env`."
        ),
    ),
    Question(
        id="q27",
        theme="errors",
        text=(
            "A coordinator asks for customer C-17's orders in March and in April. March comes back "
            '`isError: false` with `structuredContent: {"orders": []}`; April comes back `isError: true` with '
            '`errorCategory: "permission"`. What should it tell the user?'
        ),
        options={
            "A": "Customer C-17 placed no orders in March or in April, according to both lookups.",
            "B": "Both lookups failed, and both are being retried in the background.",
            "C": "March failed and will be retried; April has no orders on record.",
            "D": "No orders in March; April could not be checked, because access was denied.",
        },
        answer="D",
        explanation=(
            'A valid empty result ("no orders match this filter") is not an error: `isError: false` with '
            "empty content is the normal case. April is an access failure: the query never ran, so nothing is "
            f'known about April ({RECOVERY}; {EMPHASES}). **A** reports an access failure as "no orders", '
            "misstating the state to the user. **B** and **C** treat the empty result as a failure, so the "
            "coordinator retries for nothing; **C** also invents an answer for April."
        ),
    ),
    Question(
        id="q28",
        theme="integration",
        text=(
            "A project configures three MCP servers: `jira`, `github` and `postgres`. According to the exam guide, "
            "when can the agent use their tools?"
        ),
        options={
            "A": "One server at a time: you choose the active server in `/mcp` before starting each task.",
            "B": "All of them: every server's tools are discovered at connection and available together.",
            "C": "Each server's tools appear only after you `@`-mention that server by name in your prompt.",
            "D": "Only the first server's, since tools with the same name on several servers would collide.",
        },
        answer="B",
        explanation=(
            "The tools of all servers are discovered at the moment of connection and are available "
            "simultaneously, so one task can combine a Jira lookup, a GitHub change and a database query "
            f"({COVERS}). **A**: `/mcp` shows and manages servers; it does not switch between them. **C** confuses "
            "tools with resources, which `@` mentions attach. **D**: Claude Code names each tool "
            f"`mcp__<server>__<tool>`, so the server name keeps equal tool names apart ({DOCS_LONG_NAMES})."
        ),
        claude_code=(
            "it uses tool search by default: only tool names and server instructions load when the session starts, "
            "and a tool's full definition loads when Claude searches for it, so more servers cost little context. "
            "Every tool is still available in the session. `ENABLE_TOOL_SEARCH=false` loads all definitions up "
            'front, as the exam guide describes, and `"alwaysLoad": true` does so for one server '
            f"({DOCS_TOOL_SEARCH}; {DOCS_SEARCH_CONFIG}; {DOCS_NO_DEFERRAL})."
        ),
    ),
    Question(
        id="q29",
        theme="expansion",
        text=(
            'A team\'s `.mcp.json` starts its tracker server with `"args": ["--allow-writes=${ALLOW_WRITES:-false}"]`. '
            "Developers export `ALLOW_WRITES=true` before starting Claude Code on days they want the agent to be "
            "able to change tickets. How does the exam guide judge this?"
        ),
        options={
            "A": "A misuse: `${VAR}` is for keeping secrets out of git, not for runtime configuration logic.",
            "B": "Good practice: the `:-default` form exists for exactly this kind of per-session switch.",
            "C": "Acceptable, but only once the reference moves out of `args` and into the entry's `env`.",
            "D": "It cannot work: expansion applies only in `headers`, so the server receives the literal text.",
        },
        answer="A",
        explanation=(
            "The exam emphases say it outright: `${VAR}` and `${VAR:-default}` keep secrets out of git; they are "
            f"not for runtime configuration logic ({EMPHASES}). Whether the agent may write then hinges on what "
            "someone happened to export, which no review of the repository shows and no teammate can reproduce. "
            "If the team needs a read-only and a writing variant, commit two server entries; a developer who wants "
            f"a variant just for herself adds it in local scope, which overrides the project's ({SCOPES}). "
            "**B**: a default is a fallback for a missing value, not a switch. **C**: moving the reference changes "
            "nothing about the logic. **D**: expansion applies in `command`, `args`, `env`, `url` and `headers`."
        ),
    ),
    Question(
        id="q30",
        theme="primitives",
        text=(
            "Several agents read the same runbook many times a day, and some reads are retried after timeouts. Why "
            "does the exam guide prefer a resource such as `confluence://pages/12345` to a `get_runbook` tool here?"
        ),
        options={
            "A": "Resources are faster to serve, because they bypass JSON-RPC and go straight to the host.",
            "B": "Resources are addressed by URI and change no state, so repeated reads are cheap and cache well.",
            "C": "Resources are model-controlled, so the agent itself can decide when a fresh read is needed.",
            "D": "A tool can serve only one agent at a time, while a resource can serve many at once.",
        },
        answer="B",
        explanation=(
            "Because resources are addressed by URI and do not change state, they are cheaper to repeat and "
            f"friendlier to caching than the same data wrapped in a tool call ({TOOLS_RESOURCES}). **A**: resources "
            "travel over the same JSON-RPC session as tools. **C**: resources are controlled by the application or "
            "the user; tools are the model-controlled primitive. **D**: nothing in MCP limits a tool to one caller."
        ),
    ),
    Question(
        id="q31",
        theme="errors",
        text=(
            "A subagent fetched 40 of 60 account records; then the service kept timing out. It tried three times on "
            "the primary endpoint and on the fallback, and its retry budget is spent. What should its escalation to "
            "the coordinator contain?"
        ),
        options={
            "A": "Only the text of the last error, to keep the coordinator's context window small and focused.",
            "B": "Only a request that the coordinator run the whole task again from the beginning.",
            "C": "The final `errorCategory`/`isRetryable`, a note for the log, the 40 partial results, and what was "
            "tried.",
            "D": "The raw stack trace and every HTTP response, so that the coordinator can diagnose the fault.",
        },
        answer="C",
        explanation=(
            "An escalating subagent returns a structured envelope: the final `errorCategory`/`isRetryable`, "
            "a description for the coordinator's logs, the partial results gathered before the failure, and what "
            "was attempted (which endpoints, how many retries), so that the coordinator does not repeat the work "
            f"({RECOVERY}). **A** drops the partial results and the record of attempts. **B** throws away 40 "
            "records and invites the same failed attempts again. **D** hands over raw detail instead of the "
            "structured facts the coordinator decides on."
        ),
    ),
    Question(
        id="q32",
        theme="integration",
        text=(
            'Your custom `search_runbooks` tool is described as "Searches docs." In practice the agent keeps '
            "running Grep over the repository instead of calling it. What is the fix?"
        ),
        options={
            "A": "Deny Grep in the permission settings, so that the agent has no other way left to search.",
            "B": "Shorten the description even further, so that it takes up less of the context window.",
            "C": "Rename the tool to `grep`, so that the agent picks it whenever it wants to search anything.",
            "D": "Rewrite the description: what the runbooks cover, when to use it over Grep, how to query, what it "
            "returns.",
        },
        answer="D",
        explanation=(
            f"Rich tool descriptions keep the agent from falling back to built-ins such as Grep ({COVERS}). "
            "The model decides from a tool's name, description and parameters alone, so the description says what "
            "the data is about, when to call, how to phrase the query and what to do with the result; check it by "
            "asking a real client a question without naming the tool and looking for the call in the server's log "
            f"({MISTAKES_DESCRIPTIONS}). **A** takes away a useful built-in and still leaves the model unaware of "
            "when the tool helps. **B** makes the problem worse. **C** misleads the model about what the tool does."
        ),
    ),
    Question(
        id="q33",
        theme="scopes",
        text=(
            "You have a user-scope server named `sentry`. You then enable a plugin, `observability`, that also ships "
            "a server named `sentry`, pointing at a different URL. By the exam guide's precedence, which `sentry` "
            "definition is used?"
        ),
        options={
            "A": "The plugin's: a plugin enabled later overrides earlier configuration.",
            "B": "Both, merged field by field into one `sentry`.",
            "C": "Yours: user scope ranks above plugin servers.",
            "D": "Neither: Claude Code refuses to start until one of them is renamed.",
        },
        answer="C",
        explanation=(
            "The exam guide's ladder goes by name: local, then project, then user, then plugin servers, then "
            f"claude.ai connectors ({SCOPES}). Give this answer on the exam. **A** inverts the ladder. **B**: "
            "definitions are never merged. **D**: precedence exists precisely to settle such clashes without an "
            "error."
        ),
        claude_code=(
            "it matches duplicates by name only within the local, project and user scopes; plugin servers and "
            "claude.ai connectors are matched by endpoint (the same URL or command). This plugin's `sentry` points "
            "elsewhere, so it is not a duplicate: it loads next to yours as `plugin:observability:sentry`, with "
            "tools named `mcp__plugin_observability_sentry__<tool>`. Only a plugin server with the same endpoint as "
            f"an enabled server above it is dropped ({DOCS_LADDER}; {DOCS_PLUGINS})."
        ),
    ),
    Question(
        id="q34",
        theme="expansion",
        text=(
            "A project's `.mcp.json` starts a server with "
            '`"command": "${CLAUDE_PROJECT_DIR}/.venv/bin/python", "args": ["-m", "tools.server"]`. Why does the '
            "exam guide advise writing `${CLAUDE_PROJECT_DIR:-.}` here instead?"
        ),
        options={
            "A": "It need not: Claude Code sets `CLAUDE_PROJECT_DIR` in its own environment before it expands.",
            "B": "Expansion does not apply in `command`, so only the default form makes Claude Code resolve the path.",
            "C": "It matters only until the reference moves into `env`, where the server expands it on its own.",
            "D": "`CLAUDE_PROJECT_DIR` is set in the server's environment, not Claude Code's, so at expansion time "
            "it is usually unset.",
        },
        answer="D",
        explanation=(
            "`${CLAUDE_PROJECT_DIR}` is set in the server's environment, not in Claude Code's, so using it at the "
            "top level of `command` or `args` usually needs the default `${CLAUDE_PROJECT_DIR:-.}` "
            f"({EXPANSION}). The server process itself can read `CLAUDE_PROJECT_DIR` at run time, and plugin "
            f"configurations substitute it directly ({DOCS_INSTALL}). The fallback `.` is the folder Claude Code "
            "was started in, so it finds the interpreter only when you start Claude Code from the project root "
            "(observed in Claude Code 2.1.332). **A** is the very misconception the guide warns about. **B**: "
            "expansion does apply in `command`. **C**: Claude Code expands `env` values just as "
            "it expands `command`; the server receives them already expanded."
        ),
    ),
    Question(
        id="q35",
        theme="primitives",
        text=(
            "To save writing a tool, a colleague proposes a resource `tickets://PROJ-12/close` that closes the "
            "ticket whenever it is read. What is wrong with this design?"
        ),
        options={
            "A": "Nothing: reading a resource is just another request, and the server may do what it likes.",
            "B": "Closing changes state, so it belongs in a tool such as `close_ticket`; resources are read-only.",
            "C": "Nothing, as long as the URI is listed only in the project's committed `.mcp.json`.",
            "D": "It should be a prompt instead, so that closing a ticket becomes user-controlled.",
        },
        answer="B",
        explanation=(
            "Resources are application-controlled, read-only and identified by a URI; tools are "
            "model-controlled and may have side effects, so anything that changes state is a tool "
            f"({TOOLS_RESOURCES}; {EMPHASES}). A host may attach or re-read a resource whenever it likes, and reads "
            "are repeated and cached freely, so a side effect there would fire without anyone deciding to close "
            "the ticket. **A** ignores that contract. **C**: `.mcp.json` configures servers, not resources. **D**: "
            "a prompt is a template the user starts, not a way to perform an action."
        ),
    ),
    Question(
        id="q36",
        theme="integration",
        text=(
            "Your team needs Jira, GitHub and Postgres in Claude Code, plus access to its in-house deployment "
            'pipeline. A developer offers to write custom MCP servers for all four, since "each is only a few '
            'hundred lines". What does the exam guide advise?'
        ),
        options={
            "A": "Community servers for Jira, GitHub and Postgres; a custom server only for the in-house pipeline.",
            "B": "Write all four: the code is small, and owning it avoids depending on anyone else's releases.",
            "C": "Write all four, because community servers cannot be shared with the team through `.mcp.json`.",
            "D": "Use community servers for all four, and adapt the in-house pipeline to fit one of them.",
        },
        answer="A",
        explanation=(
            "Prefer community servers; build a custom one only when the integration is specific to the team "
            "and no maintained community option exists, such as an internal microservice, your deployment pipeline "
            f"or a home-grown CRM ({COMMUNITY}; {EMPHASES}). **B** misjudges the cost, which is not the code but "
            "the upkeep: schema drift, authentication updates, transport upgrades, security reviews. **C**: a "
            "community server goes into `.mcp.json` like any other, as the guide's own GitHub and Postgres examples "
            "show. **D** bends a team-specific process to fit a tool that was not built for it."
        ),
    ),
]

QUIZ = Quiz(name="mock_exam", title="Mock exam: MCP integration", intro=INTRO, questions=QUESTIONS)
