"""Quiz 4: tools, resources and prompts (lesson 04), keyed to the exam guide's task statement 2.4."""

from __future__ import annotations

from grader.quizzes.model import Question, Quiz

QUIZ = Quiz(
    name="quiz04_tools_vs_resources",
    title="Quiz 4: Tools, resources and prompts",
    intro=(
        "Ten scenarios from lesson 04: who controls each primitive, when a capability is a tool and when a resource, "
        "content catalogs and what they cost, attaching resources and running prompts in Claude Code, the JSON-RPC "
        "session and its capabilities, and which tools an agent has once its servers connect. Pick the one best "
        "answer to each, as the exam guide would answer it. Your feedback explains every answer."
    ),
    questions=[
        Question(
            id="q01",
            theme="primitives",
            text=(
                "A tracker's MCP server offers `get_issue(key)`, which only reads one issue. A reviewer says: "
                '"It changes nothing, so it must be a resource, not a tool." Given the exam guide\'s rules, '
                "what is the best reply?"
            ),
            options={
                "A": "Agreed: anything read-only must be published as a resource, since tools are meant only for the actions that change state",
                "B": "Agreed: Claude Code refuses to call a tool whose annotations say it only reads, so it has to become a resource",
                "C": "Not so: a read with an argument the model reasons about can be a tool; only a change of state can never be a resource",
                "D": "Not so: tools and resources are the same primitive under two names, so either is fine for a read like this",
            },
            answer="C",
            explanation=(
                "**C.** A tool fits whatever takes arguments the model must reason about, and the exam guide's own content "
                'catalog pattern ends with the agent making "the relevant `get_issue` call" (*Exam guide › MCP tools vs MCP '
                "resources*). Resources are read-only, so the rule that binds is the other way round: a capability that "
                'changes state is never a resource. **A** turns "resources are read-only" into "reads must be '
                'resources", which the guide does not say. **B** is false: a read-only hint tells a client a call is safe '
                "to repeat; it does not stop the call (*Claude Code docs, MCP › Marking tools that are safe to call "
                "twice*). **D**: they differ in who controls them, the model for tools and the application or user for "
                "resources (*Exam guide › MCP at 30,000 feet*)."
            ),
        ),
        Question(
            id="q02",
            theme="primitives",
            text=(
                "In Claude Code a developer types: `Summarise @tracker:tracker://sprints/current/issues for the stand-up`. "
                "How does the sprint's catalog reach Claude's context?"
            ),
            options={
                "A": "The user attached it: Claude Code reads the mentioned resource and includes it as an attachment",
                "B": "The model decides whether it needs the catalog and, if so, calls a tool to fetch it, since the model controls what it reads",
                "C": "The server sent the contents of every resource when it connected, and the mention only highlights one of them",
                "D": "It does not: the mention is plain text, and Claude must guess what the URI holds",
            },
            answer="A",
            explanation=(
                "**A.** Resources are application- or user-controlled, read-only content addressed by a URI (*Exam guide › "
                "MCP at 30,000 feet*); in Claude Code an `@server:protocol://path` mention loads the resource automatically "
                "and includes it as an attachment (*Claude Code docs, MCP › Using MCP resources*). **B** describes a tool, "
                "the model-controlled primitive; here the user decided. **C**: a server lists its resources, it does not push "
                "their contents at connection; the content is read when it is referenced. **D**: the mention is exactly how a "
                "user attaches a resource."
            ),
        ),
        Question(
            id="q03",
            theme="primitives",
            text=(
                "`set_status(key, status)` moves an issue to a status. Its author annotates it `readOnlyHint: false, "
                "idempotentHint: true`. What does that tell a client?"
            ),
            options={
                "A": "That it never changes anything, so it may run in parallel with every other read and be retried freely",
                "B": "That it may change state, but a repeat call with the same arguments changes nothing more, so a retry is safe",
                "C": "That it is really a resource and should be read by URI instead",
                "D": "That the server enforces it: a second call that would change the issue's state again is blocked before it runs",
            },
            answer="B",
            explanation=(
                "**B.** `idempotentHint: true` says a second call with the same arguments is safe; `readOnlyHint: true` would "
                "be the stronger promise that it changes nothing (*Claude Code docs, MCP › Marking tools that are safe to call "
                "twice*). **A** is what `readOnlyHint: true` promises, and this tool says `false`. **C**: it changes state, so "
                "it must be a tool (*Exam guide › MCP tools vs MCP resources*). **D**: a hint is a promise to the client, not "
                "a protection; a tool marked safe that is not is a lie its author answers for (*Common mistakes › 2.3 Tools "
                "without a read-only mark*)."
            ),
        ),
        Question(
            id="q04",
            theme="primitives",
            text=(
                'An agent answers "how many issues are in review?" by calling `list_issues` (20 keys a page) and then '
                "`get_issue` for each key. With 1,000 issues in the sprint that is 1,050 calls. What change does the exam "
                "guide recommend?"
            ),
            options={
                "A": "Add a `count_issues_in_review` tool, and another such tool for each new question the team asks about the sprint",
                "B": "Raise the agent's retry budget, so the long sequence of 1,050 calls is less likely to fail halfway through",
                "C": "Cache each `get_issue` result in the agent's memory, so a second question about the sprint needs far fewer calls",
                "D": "Publish the sprint's catalog (each issue's key, title, status, assignee) as a resource the host attaches",
            },
            answer="D",
            explanation=(
                "**D.** This is the exploratory N+1 the guide's content catalog pattern removes: a resource such as "
                "`issues://summary` that the host attaches, so the agent sees the catalog in its context and makes only "
                "the relevant `get_issue` call (*Exam guide › MCP tools vs MCP resources*); resources expose content "
                "catalogs to cut exploratory tool calls (*Exam guide › What this section covers*). **A** multiplies "
                "tools, one per question, and the agent still has to choose and call them. **B** makes the 1,050 calls more "
                "reliable, not fewer. **C** helps only a repeated question, and the first still costs 1,050 calls."
            ),
        ),
        Question(
            id="q05",
            theme="primitives",
            text=(
                "After moving to a catalog resource, the team notes that the agent now needs the same few requests per "
                "question whatever the sprint's size. Does the context the catalog fills stay the same size too?"
            ),
            options={
                "A": "Yes: one read is one read, whatever it returns",
                "B": "Yes: resources are cached by the client, so reading the catalog again costs no context at all",
                "C": "No: the catalog lists every issue, so it grows with the sprint; keep it small with pages or only the fields needed",
                "D": "No: a resource costs more context than the same data returned by a tool call, so the catalog should move back into a tool",
            },
            answer="C",
            explanation=(
                "**C.** Round trips stay flat, but every entry of the catalog is text in the context, so a huge sprint makes "
                "a huge catalog. The field report's advice on responses holds for resources too: return short pieces and a "
                "map of the content rather than everything (*Common mistakes › 4.5 A whole article in the answer eats the "
                "client's context*). **A** counts requests, not bytes. **B**: a cache saves the round trip to the server, not "
                "the text that enters the context. **D**: the same data costs the same context either way; as a resource it "
                "also spares the exploratory calls (*Exam guide › MCP tools vs MCP resources*)."
            ),
        ),
        Question(
            id="q06",
            theme="primitives",
            text=(
                "The tracker is configured in Claude Code under the name `tracker`, and it publishes its schema at the URI "
                "`tracker://schema`. What does a user type to attach the schema to a prompt?"
            ),
            options={
                "A": "`@tracker://schema`",
                "B": "`@tracker:tracker://schema`",
                "C": "`/mcp__tracker__schema`",
                "D": "`@schema:tracker`",
            },
            answer="B",
            explanation=(
                "**B.** The form is `@server:protocol://resource/path`: the server's name in your configuration, a colon, "
                "then the resource's URI with its own scheme (*Claude Code docs, MCP › Using MCP resources*); here both happen "
                "to be `tracker`. **A** leaves out the server's name, so nothing says which server to ask. **C** is the form "
                "of a prompt run as a command (*Claude Code docs, MCP › Using MCP prompts as commands*), not of a resource. "
                "**D** reverses the parts."
            ),
        ),
        Question(
            id="q07",
            theme="primitives",
            text=(
                'An on-call team wants engineers to run a ready-made "summarise this incident for the team channel" '
                "template when they choose, passing an issue key. The agent should never start it on its own. Which "
                "primitive fits?"
            ),
            options={
                "A": "A prompt: a template the user invokes, shown in Claude Code as a slash command",
                "B": "A tool, annotated `readOnlyHint: true`, so the model may call it freely",
                "C": "A resource at `incidents://summary`, which the host attaches to every conversation",
                "D": "A tool with a description telling the model to call it only when asked",
            },
            answer="A",
            explanation=(
                "**A.** Prompts are user-controlled, ready-made templates invoked by the user's choice: slash commands, menu "
                "items (*Exam guide › MCP at 30,000 feet*); Claude Code shows each as `/server:prompt (MCP)` and runs it as "
                "`/mcp__server__prompt` with its arguments (*Claude Code docs, MCP › Using MCP prompts as commands*). **B** "
                "and **D** make it a tool, which the model controls: the team wants the user to decide. **C**: a resource is "
                "read-only content addressed by a URI, not a template that takes an issue key, and attaching it everywhere "
                "runs it whether or not anyone asked."
            ),
        ),
        Question(
            id="q08",
            theme="primitives",
            text=(
                "A Jira server's prompt `create_issue` declares two arguments, a title and a priority. A user types "
                "`/mcp__jira__create_issue login bug high`. What does Claude Code pass to the prompt?"
            ),
            options={
                "A": "The title `login bug` and the priority `high`, because it knows the prompt has two arguments",
                "B": "One argument, `login bug high`: the whole text after the command",
                "C": "Nothing: arguments need quotes, so Claude Code refuses the command until the title is quoted",
                "D": "Three tokens, `login`, `bug` and `high`, since arguments are split at spaces",
            },
            answer="D",
            explanation=(
                "**D.** Claude Code splits a prompt's arguments at spaces, so each argument is one token; the documentation's "
                "example writes `/mcp__jira__create_issue login-bug high` for that reason (*Claude Code docs, MCP › Using MCP "
                "prompts as commands*). **A** assumes Claude Code regroups words to fit the declared arguments; it does not "
                "join tokens. **B** ignores the split. **C**: no quoting rule is involved; the command runs, with the tokens "
                "as typed."
            ),
        ),
        Question(
            id="q09",
            theme="primitives",
            text=(
                "A developer logs the stdio traffic between a client and an MCP server. The first messages are an "
                "`initialize` request carrying `protocolVersion`, `capabilities` and `clientInfo`; a response with the same "
                "`id` carrying a `protocolVersion` and the server's `capabilities` (`tools`, `resources`, `prompts`); then "
                "`notifications/initialized`, with no `id`; then `tools/list`. What do the first three messages do?"
            ),
            options={
                "A": "They authenticate the user with OAuth, and the server hides its tools until the sign-in succeeds",
                "B": "They open a stateful JSON-RPC 2.0 session: both sides agree on a protocol version and declare what they support",
                "C": "They deliver the tool definitions up front; the later `tools/list` only refreshes the client's cached copy",
                "D": "They are keep-alive messages of the stdio transport; MCP requests themselves are independent and negotiate nothing",
            },
            answer="B",
            explanation=(
                "**B.** MCP is an open protocol on JSON-RPC 2.0 connecting hosts to servers through a stateful session with "
                "capability negotiation (*Exam guide › MCP at 30,000 feet*): `initialize` and its response settle the "
                "version and each side's capabilities, `notifications/initialized` (a notification, so no `id` and no "
                "answer) closes the handshake, and requests follow. **A**: OAuth belongs to remote servers that answer 401 "
                "or 403 and is started from `/mcp` (*Exam guide › Verifying the connection (`/mcp`)*), not to this "
                "handshake. **C**: `initialize` declares that the server has tools; `tools/list` is what lists them. **D** "
                "denies the session and the negotiation the guide describes."
            ),
            claude_code=(
                "Claude Code 2.1.332 first asks each server for MCP's revision 2026-07-28, which replaces the `initialize` "
                "handshake with a `server/discover` probe and carries the version and capabilities in every request's "
                "`_meta`; with a server that does not support it, or with `MCP_PROTOCOL_NEGOTIATION=legacy`, it opens the "
                "session with `initialize` as above (*Claude Code docs, MCP › MCP client runtimes*)."
            ),
        ),
        Question(
            id="q10",
            theme="primitives",
            text=(
                "A project's `.mcp.json` configures three servers: `jira`, `github` and `postgres-readonly`. All three "
                "connect when a Claude Code session starts. According to the exam guide, which tools does the agent have?"
            ),
            options={
                "A": "Only the first server's tools, until the user switches to another server in `/mcp`",
                "B": "Only the tools of servers the user has mentioned with an `@` in the conversation so far",
                "C": "All three servers' tools: discovered when the servers connect, and available together",
                "D": "One server's tools at a time; the agent first picks a server with a tool call, then sees its tools",
            },
            answer="C",
            explanation=(
                "**C.** The exam guide's knowledge for task statement 2.4: the tools of all servers are discovered at "
                "connection and available at the same time (*Exam guide › What this section covers*); Claude Code names "
                "each `mcp__<server>__<tool>` (*Claude Code docs, MCP › Tools with names longer than 128 characters*). "
                "**A** and **D** invent a one-server-at-a-time rule; `/mcp` shows and manages servers, it does not switch "
                "between them. **B** confuses tools with resources: an `@` mention attaches a resource (*Claude Code docs, "
                "MCP › Using MCP resources*)."
            ),
            claude_code=(
                "Claude Code 2.1.332 lists every server's tools when it connects, but with tool search (on by default) only "
                "tool names and server instructions load into Claude's context at start; a tool's full definition loads "
                "when Claude searches for it (*Claude Code docs, MCP › Scaling with MCP tool search*). "
                "`ENABLE_TOOL_SEARCH=false` loads every definition upfront (*Claude Code docs, MCP › Configuring tool "
                "search*)."
            ),
        ),
    ],
)
