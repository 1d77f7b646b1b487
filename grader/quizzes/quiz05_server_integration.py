"""Quiz 5: server integration (lesson 05), keyed to the exam guide's task statement 2.4."""

from __future__ import annotations

from grader.quizzes.model import Question, Quiz

QUIZ = Quiz(
    name="quiz05_server_integration",
    title="Quiz 5: Server integration",
    intro=(
        "Ten scenarios from lesson 05: community or custom servers, descriptions that get a tool called and how to "
        "verify them, what the agent has at the start of a session, failures the model can act on, and the limits "
        "Claude Code puts on results and tool names. Pick the one best answer to each, as the exam guide would answer "
        "it. Your feedback explains every answer."
    ),
    questions=[
        Question(
            id="q01",
            theme="integration",
            text=(
                "Your team wants Claude Code to read and update Jira issues. A colleague offers to write a small custom "
                'MCP server for it this afternoon: "it is only four tools". What does the exam guide advise?'
            ),
            options={
                "A": "Write it: four tools take an afternoon, and a server the team owns can change whenever it needs to",
                "B": "Use the maintained community Jira server; custom servers are for team-specific needs with none",
                "C": "Write it, because a community server cannot be committed to the project's `.mcp.json` for the team",
                "D": "Either one: once a server answers its tools correctly, the choice between them has no lasting cost",
            },
            answer="B",
            explanation=(
                "**B.** The exam guide's rule: prefer community servers (Jira, GitHub, Postgres), and write a custom one only "
                "when the integration is specific to your team and no maintained community server exists "
                "(*Exam guide › Choosing community vs custom servers*; *Exam guide › Exam emphases*). **A** and **D** "
                "count only the code; the real cost of a custom server is its upkeep. **C** is false: a community "
                "server is configured in `.mcp.json` like any other and shared with the team."
            ),
        ),
        Question(
            id="q02",
            theme="integration",
            text=(
                "Which of these needs is the one that justifies writing a custom MCP server, by the exam guide's test?"
            ),
            options={
                "A": "Letting Claude open, comment on and review pull requests in all of the team's GitHub repositories",
                "B": "Running read-only SQL queries against the team's own Postgres database from the agent",
                "C": "Rolling back releases in the team's own deploy pipeline, for which no maintained server exists",
                "D": "Reading Jira sprints, because the team's Jira instance has several custom fields of its own",
            },
            answer="C",
            explanation=(
                "**C.** A custom server is for an integration that is specific to the team and has no maintained community "
                "server: an internal microservice, *your deploy pipeline*, a home-grown CRM (*Exam guide › Choosing "
                "community vs custom servers*). **A**, **B** and **D** are covered by the community servers the guide "
                "names (GitHub, Postgres, Jira); custom fields in Jira are data the community server already reads, "
                "not a reason to maintain your own."
            ),
        ),
        Question(
            id="q03",
            theme="integration",
            text=(
                "Your team did write a custom server for its deploy pipeline. A year later, what does the exam guide "
                "say is the real cost of that decision?"
            ),
            options={
                "A": "The upkeep: schema drift, authentication updates, transport upgrades and security review",
                "B": "The first version's code, which is paid once and is then done for as long as the server runs",
                "C": "A licence fee for each tool call, which community servers do not charge their users at all",
                "D": "Nothing more, as long as the server's own test suite keeps passing on every single commit",
            },
            answer="A",
            explanation=(
                "**A.** The guide puts it plainly: the cost of a custom server is not the code but the maintenance that "
                "follows it: schema drift, auth updates, transport upgrades, security review (*Exam guide › Choosing "
                "community vs custom servers*). **B** counts the part that is paid once. **C** is invented: MCP has no "
                "per-call licence. **D**: passing tests do not follow the pipeline's API when it renames a field, nor "
                "review each new tool the server exposes."
            ),
        ),
        Question(
            id="q04",
            theme="integration",
            text=(
                'A team\'s MCP server has a tool `search_deploys` described only as `"Search."`. Asked "did checkout '
                '2.15 reach prod?", Claude Code greps the repository and the CI logs instead of calling the tool. '
                "What is the fix the exam guide points to?"
            ),
            options={
                "A": "Rename the tool to `search_deploys_tool` so that the model notices it among the built-in tools",
                "B": "Tell every user to name the tool explicitly in their prompts whenever they ask about a deploy's state",
                "C": "Describe what the data is, when to call the tool, how to phrase the input and what the result means",
                "D": "Add more tools to the same server so that the model chooses that server more often than Grep",
            },
            answer="C",
            explanation=(
                "**C.** The model decides from a tool's name, description and parameters alone; the exam guide's skill is to "
                "write rich tool descriptions so that the agent does not fall back to built-ins like Grep (*Exam guide "
                "› What this section covers*, task 2.4). *Common mistakes › 5.2 Vague descriptions: the model does not "
                "call the tool* lists the four things a description says. **A** changes nothing the model can reason "
                "with. **B** moves the server's job to every user. **D** gives the model more tools it cannot tell apart."
            ),
        ),
        Question(
            id="q05",
            theme="integration",
            text=(
                "You rewrote a tool's description and a keyword lint in CI now passes it (it finds a when-clause, the "
                "data's name and a word on the result). How do you check that the new description actually gets the "
                "tool called?"
            ),
            options={
                "A": "Nothing more: the lint passing proves that the description holds every part it needs to get called",
                "B": "Check that the tool appears in `tools/list` after every deploy, with its new description in it",
                "C": "Check that the description is under 4,096 characters, so that Claude reads all of it up front",
                "D": "Ask a real client a question needing the tool, without naming it, and read the server's call log",
            },
            answer="D",
            explanation=(
                "**D.** *Common mistakes › 5.2 Vague descriptions: the model does not call the tool* gives the check: look at "
                "the description as the client shows it, then ask a real client a question without mentioning the tool "
                "and see in the server's logs whether the call happened; the *Pre-launch checklist* asks for a log that "
                "shows the query the model wrote. **A**: a word-matching lint is fooled by a description that says the "
                "words and nothing else. **B** and **C** are necessary, not sufficient: a listed, uncut description can "
                "still lose to Grep."
            ),
        ),
        Question(
            id="q06",
            theme="integration",
            text=(
                "A project's `.mcp.json` configures three servers: the community Jira and GitHub servers and the team's "
                "deploy server. A developer starts a Claude Code session in the project and approves them. By the exam "
                "guide, which tools can the agent use?"
            ),
            options={
                "A": "Only the first server's tools, until the developer switches over to another server in `/mcp`",
                "B": "The tools of all three servers: they are discovered at connection and available together",
                "C": "Only the tools of the servers that the developer names in the session's first prompt",
                "D": "Only the deploy server's tools, because project servers shadow the community ones",
            },
            answer="B",
            explanation=(
                "**B.** The exam guide's knowledge for task 2.4: the tools of all configured servers are discovered at "
                "connection and available at the same time (*Exam guide › What this section covers*). **A** and **C** "
                "invent a one-server-at-a-time model that MCP does not have. **D** confuses the precedence of scopes, "
                "which decides between entries with the same name, with which servers' tools are available."
            ),
            claude_code=(
                "Claude Code 2.1.332 connects to every server and lists its tools, but with tool search (on by default) "
                "only the tools' names and the servers' instructions are in Claude's context at the start; a tool's full "
                "definition loads when Claude searches for it. `ENABLE_TOOL_SEARCH=false`, or `alwaysLoad` in a server's "
                "entry or a tool's `_meta`, loads definitions up front (*Claude Code docs, MCP › Scaling with MCP tool "
                "search*)."
            ),
        ),
        Question(
            id="q07",
            theme="integration",
            text=(
                "A lookup tool lets a `KeyError` escape for an unknown id. The server's SDK turns it into a JSON-RPC "
                "error (`-32603`, Internal server error). What does the exam guide say the tool should return instead?"
            ),
            options={
                "A": "An `isError: true` result in `CallToolResult`, with `errorCategory` and `isRetryable`",
                "B": "Nothing different: a JSON-RPC protocol error is how MCP reports a tool call that failed",
                "C": 'An `isError: true` result whose text says "Operation failed", so that the model stops',
                "D": "An empty successful result, so that the agent's plan is not interrupted by the lookup",
            },
            answer="A",
            explanation=(
                "**A.** `isError: true` lives inside `CallToolResult`, not as a JSON-RPC error: the model must see the failure "
                "to recover, and `errorCategory` and `isRetryable` tell it whether to retry, ask or give up (*Exam guide "
                "› Exam emphases*; *Common mistakes › 5.1 Exceptions instead of statuses*). **B**: a JSON-RPC error is "
                'for protocol problems such as an unknown tool, and the model cannot tell "no data" from "server '
                "broken\" in it. **C** is the guide's canonical wrong answer. **D** reports a failure as a valid empty "
                "result."
            ),
        ),
        Question(
            id="q08",
            theme="integration",
            text=(
                "A tool returns a deploy log of about 120,000 characters (about 30,000 tokens). A developer starts Claude "
                "Code with `MAX_MCP_OUTPUT_TOKENS=50000` so that the log fits. What happens to the result, by Claude "
                "Code's documentation?"
            ),
            options={
                "A": "It goes into the conversation whole: about 30,000 tokens is under the new 50,000-token limit",
                "B": "Claude Code rejects the call with an error, because the log is over its output limit, and it is lost",
                "C": "It still goes to a file, since text over 50,000 characters does; Claude reads the file when needed",
                "D": "It is cut to its first 50,000 characters, and the rest of the log is dropped without a note",
            },
            answer="C",
            explanation=(
                "**C.** By *Claude Code docs, MCP › MCP output limits and warnings*: a successful text result longer than "
                "50,000 characters is saved to a file regardless of its token count, and `MAX_MCP_OUTPUT_TOKENS` does "
                "not change that threshold; the conversation gets a message with the path, so Claude reads the file "
                "when it needs the content. **A** ignores the character rule. **B** and **D**: nothing is lost, and "
                "only an `isError` text is cut. The server's fix is to return less per call (pages), or, for output "
                "large by nature, to declare `anthropic/maxResultSizeChars`."
            ),
        ),
        Question(
            id="q09",
            theme="integration",
            text=(
                "A team blog's search tool returns every matching article whole, so a broad query fills the client's "
                "context. What should the server's author do?"
            ),
            options={
                "A": "Return a page of short snippets with a next-page hint, and the outline through another tool",
                "B": "Declare `anthropic/maxResultSizeChars` of 500,000, so that every answer stays in the conversation",
                "C": "Ask every user of the server to raise `MAX_MCP_OUTPUT_TOKENS` before they start Claude Code",
                "D": "Return the articles as an `isError` result, so that Claude Code cuts them short by itself",
            },
            answer="A",
            explanation=(
                "**A.** A whole article spends thousands of tokens of context on the paragraph the model needed; return "
                "fragments and a map of the article instead (*Common mistakes › 4.5 A whole article in the answer eats "
                "the client's context*), with pages the model can follow. **B**: raising the threshold is for output "
                "that is large by nature, such as a schema; it keeps the flood in the context. **C** pushes the "
                "server's problem to every user, and does not move the 50,000-character rule (*Claude Code docs, MCP › "
                "MCP output limits and warnings*). **D** reports a success as a failure."
            ),
        ),
        Question(
            id="q10",
            theme="integration",
            text=(
                "A team ships its `blog` server inside its plugin `acme-engineering-handbook`. In `/mcp` a tool "
                "`get_article_outline_with_title_summary_and_section_headings_for_one_published_blog_post` is listed, "
                "but Claude never calls it, even when asked to. What is the likely cause?"
            ),
            options={
                "A": "Its description is longer than 4,096 characters, so Claude Code hides the tool from Claude",
                "B": "Plugin tools ask for approval on every call, and the prompt was dismissed without an answer",
                "C": "Tool search deferred it, and a deferred tool cannot be called until the session is restarted",
                "D": "Its full name with the plugin's prefix is over 128 characters, so Claude Code leaves it out",
            },
            answer="D",
            explanation=(
                "**D.** A tool in a plugin's server is called `mcp__plugin_<plugin>_<server>__<tool>` (*Claude Code docs, MCP › "
                "MCP servers provided by plugins*), here 131 characters; Claude Code does not include a tool whose full "
                "name is longer than 128 characters in the list it sends to Claude, while the server's other tools keep "
                "working (*Claude Code docs, MCP › Tools with names longer than 128 characters*). **A**: a long "
                "description is cut, not dropped. **C**: a deferred tool is found through tool search and then called. "
                "**B**: only a tool marked `anthropic/requiresUserInteraction` asks on every call, and it would show "
                "the prompt, not stay silent."
            ),
        ),
    ],
)
