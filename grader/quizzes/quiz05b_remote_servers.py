"""Quiz 5b: remote servers (lesson 05b), keyed to the exam guide where it speaks and to the field article elsewhere."""

from __future__ import annotations

from grader.quizzes.model import Question, Quiz

THIRTY_K = "*Exam guide › MCP at 30,000 feet*"
SCHEMA = "*Exam guide › The `.mcp.json` schema (with an example)*"
VERIFY = "*Exam guide › Verifying the connection (`/mcp`)*"
INSTALLING = "*Claude Code docs, MCP › Installing MCP servers*"
RECONNECTION = "*Claude Code docs, MCP › Automatic reconnection*"
AUTH = "*Claude Code docs, MCP › Authenticating with remote MCP servers*"
BOT_CHECK = "*Common mistakes › 1.4 An HTML page instead of JSON: the proxy's bot protection*"
PROXY_IP = "*Common mistakes › 3.1 The rate limit counts the proxy's IP instead of the client's*"
FORGED = "*Common mistakes › 3.2 A forged `CF-Connecting-IP` sent straight to the server*"
DAILY = "*Common mistakes › 3.3 No daily safety cap*"

QUIZ = Quiz(
    name="quiz05b_remote_servers",
    title="Quiz 5b: Remote servers",
    intro=(
        "Eight scenarios from lesson 05b: transports, what `/mcp` shows, reconnection, signing in to a remote server, "
        "a proxy in front of the server, and rate limits. Pick the one best answer to each: as the exam guide would "
        "answer it where it speaks, and as the field article *Common mistakes when building an MCP server* advises "
        "elsewhere. Your feedback explains every answer and, where Claude Code behaves differently, says what it does."
    ),
    questions=[
        Question(
            id="q01",
            theme="integration",
            text=(
                "A vendor hosts an MCP server at `https://mcp.vendor.example/mcp`. You add it to the project's "
                "`.mcp.json` for the whole team. Which entry is right?"
            ),
            options={
                "A": '`{"type": "stdio", "command": "https://mcp.vendor.example/mcp"}`',
                "B": '`{"type": "http", "url": "https://mcp.vendor.example/mcp"}`',
                "C": '`{"type": "sse", "url": "https://mcp.vendor.example/mcp"}`, since SSE is the transport for new remote servers',
                "D": '`{"url": "https://mcp.vendor.example/mcp"}`: a `url` alone tells Claude Code it is remote',
            },
            answer="B",
            explanation=(
                "**B.** A server reached at a URL uses Streamable HTTP: `type` `http` (alias `streamable-http`) with "
                f"`url` and optional `headers` ({SCHEMA}; {THIRTY_K}). **A** is the stdio transport, for a local "
                "subprocess Claude Code starts itself; a URL is not a command. **C**: SSE is deprecated; use it only for "
                f"a service that offers nothing else ({THIRTY_K}; {INSTALLING}). **D**: an entry with a `url` but no "
                f"`type` is a configuration error; Claude Code reads an entry without `type` as stdio and skips it with "
                f"a warning ({INSTALLING})."
            ),
        ),
        Question(
            id="q02",
            theme="integration",
            text=(
                "You added a remote server and want to confirm, inside Claude Code, that it connected, how many tools "
                "it declares and whether it still needs you to sign in. What do you use?"
            ),
            options={
                "A": "`/mcp`: each server with its status, its tool, resource and prompt counts, its sign-in state and any backoff",
                "B": "The project's `.mcp.json`: every server listed there with a valid entry is connected as soon as the session starts",
                "C": "`claude mcp add` again: it checks the credentials and the connection while saving the entry",
                "D": "Nothing: Claude Code stops the whole session with an error as soon as a configured server cannot connect",
            },
            answer="A",
            explanation=(
                "**A.** `/mcp` is the place to verify a connection: every server, its tool/resource/prompt counts, its "
                f"authentication state and any current reconnection backoff ({VERIFY}). **B**: the file says what is "
                "configured, not what connected. **C**: `claude mcp add` writes the entry; whether the server connects, "
                f"and with what, is what `/mcp` shows ({VERIFY}). **D**: a server that fails is shown as failed; the session goes on without its tools "
                f"({RECONNECTION})."
            ),
        ),
        Question(
            id="q03",
            theme="integration",
            text=(
                "During a session, the team's remote HTTP server is redeployed and unreachable for about ten seconds. "
                "By the exam guide, what does Claude Code do?"
            ),
            options={
                "A": "Nothing until you restart Claude Code: remote servers connect only at start",
                "B": "It retries every second for as long as the session lasts",
                "C": "It removes the server from the configuration after the first failed request",
                "D": "It reconnects automatically, up to five times, with exponential backoff",
            },
            answer="D",
            explanation=(
                "**D.** HTTP and SSE servers reconnect automatically, up to five times, with exponential backoff "
                f"({VERIFY}). Claude Code's documentation gives the waits: 1 s, doubled each time "
                f"({RECONNECTION}), so a ten-second outage is over by the fourth attempt. **A** ignores the automatic "
                "reconnection. **B** is neither bounded nor exponential. **C**: a failing server is marked failed in "
                "`/mcp`, never removed from the configuration."
            ),
        ),
        Question(
            id="q04",
            theme="integration",
            text=(
                "In an interactive session two servers drop at once: `notes`, a local stdio server whose process "
                "crashed, and `jira`, a remote HTTP server whose connection broke. Which does Claude Code reconnect on "
                "its own, by the exam guide?"
            ),
            options={
                "A": "Both, each up to five times with backoff",
                "B": "Only `jira`: HTTP/SSE servers reconnect; stdio servers, local subprocesses, are not reconnected",
                "C": "Only `notes`: a local process is cheap to start again",
                "D": "Neither: every dropped server waits for you in `/mcp`",
            },
            answer="B",
            explanation=(
                "**B.** The exam guide: HTTP/SSE servers reconnect automatically up to five times with exponential "
                f"backoff; stdio servers, being local subprocesses, are not reconnected ({VERIFY}). **A** gives stdio a "
                "reconnection it does not have. **C** inverts the rule. **D** forgets the automatic reconnection of "
                "remote servers."
            ),
            claude_code=(
                "In an interactive session Claude Code marks the crashed stdio server failed and you choose Reconnect in "
                "its menu in `/mcp`; in `claude -p` and Agent SDK sessions it starts a stdio server that exited again "
                f"the next time Claude calls one of its tools ({RECONNECTION})."
            ),
        ),
        Question(
            id="q05",
            theme="integration",
            text=(
                "You add a remote server with no `headers`. Its reply to Claude Code is `401 Unauthorized` with "
                '`WWW-Authenticate: Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`. '
                "What is the intended next step?"
            ),
            options={
                "A": "Put your account password in the entry's `headers` through a `${VAR}` reference, so it stays out of the file",
                "B": "Wait: the automatic reconnection retries with backoff and will get past the 401 on its own",
                "C": "Open `/mcp`, choose the server and sign in: Claude Code runs the OAuth flow in your browser",
                "D": "Switch the entry to `type: stdio`, which needs no authentication",
            },
            answer="C",
            explanation=(
                "**C.** A remote server that answers 401/403 with `WWW-Authenticate` is signed in to through `/mcp`, "
                f"where the OAuth flow starts ({VERIFY}); Claude Code then opens the browser sign-in and stores and "
                f"refreshes the token ({AUTH}). **A**: the server asks for an OAuth token, not a password, and "
                "expansion is for keeping secrets out of the file, not for signing in. **B**: an authentication error is "
                f"not fixed by retrying; Claude Code does not retry it ({RECONNECTION}). **D**: a URL cannot become a "
                "stdio command."
            ),
            claude_code=(
                "If you set the `Authorization` header yourself (in `headers` or through `headersHelper`), Claude Code "
                "reports a 401 as a failed connection instead of starting OAuth; `claude mcp login NAME` runs the same "
                f"sign-in from the shell ({AUTH})."
            ),
        ),
        Question(
            id="q06",
            theme="integration",
            text=(
                "Your MCP server works locally. In production, behind Cloudflare, clients cannot connect, and `curl` "
                'from outside gets an HTML page "Checking your browser..." instead of JSON. What is the fix?'
            ),
            options={
                "A": "A proxy rule for `/mcp` with no bot check and no caching, leaving abuse to the application's rate limits",
                "B": "Ask every client to send a browser's `User-Agent` header, so the proxy's bot check lets its requests through",
                "C": "Rewrite the tool descriptions so the model trusts the server",
                "D": "Turn off the proxy's bot protection and caching for the whole site, so no client ever sees a challenge page",
            },
            answer="A",
            explanation=(
                "**A.** MCP clients are programs, so the proxy's bot check shows them a challenge page they cannot "
                "pass, and a cache may replay a stored reply; the fix is a rule for `/mcp` with no bot check and no "
                f"caching, while rate limits in the application keep abuse in check ({BOT_CHECK}). **B**: you do not "
                "control every client, and faking a browser is not a fix. **C**: the client never reaches the tools. "
                "**D** removes protection the rest of the site still needs."
            ),
        ),
        Question(
            id="q07",
            theme="integration",
            text=(
                "Behind Cloudflare, your server limits each client to 30 requests a minute, keyed by the connection's "
                "address. As soon as one user is busy, everyone gets `429`. The origin server also has a public "
                "address of its own. Which change fixes the limit without opening a hole?"
            ),
            options={
                "A": "Raise the limit to 3,000 requests a minute, so one busy user no longer uses up everyone's budget",
                "B": "Key by the `CF-Connecting-IP` header on every request, whoever sends it, since it carries the real client's address",
                "C": "Drop the per-client limit and keep only the daily cap",
                "D": "Key by the forwarded client address (`CF-Connecting-IP`), believed only on requests from Cloudflare's addresses",
            },
            answer="D",
            explanation=(
                "**D.** Behind a proxy every request comes from the proxy's address, so a limit keyed by the connection "
                f"puts every client in one budget; key by the forwarded client address ({PROXY_IP}), and believe the "
                "header only from the proxy, because anyone who finds the origin's own address can send a new forged "
                f"`CF-Connecting-IP` with every request ({FORGED}). **A** still counts everyone as one client, only "
                "later. **B** is the forged-header hole. **C** stops one insistent client no longer."
            ),
        ),
        Question(
            id="q08",
            theme="integration",
            text=(
                "Each call to your server's `answer_question` tool runs a paid LLM. The Redis store that holds the "
                "rate-limit counters goes down. What should the limiter do until it is back?"
            ),
            options={
                "A": "Fail open: serve every request without limits until the store is back, since availability comes first for users",
                "B": "Fail open, and rely on the proxy's bot check to stop abuse until the store is back",
                "C": "Fail closed: refuse requests (or count in memory) until the store is back, with a spend cap at the provider",
                "D": "Switch the rate limit off for good, since the store it depends on can fail again at any time",
            },
            answer="C",
            explanation=(
                "**C.** Choose by the price of one call: an expensive call (an LLM, a paid API, an action on data) "
                "fails closed, since minutes of unavailability cost less than an unbounded bill; an in-memory counter "
                "gives a ceiling while the store is down, and the provider's spend cap is the last line "
                f"({DAILY}). **A** suits a cheap call over public data, not this one. **B**: `/mcp` should be exempt "
                f"from the bot check ({BOT_CHECK}), and it is not a rate limit. **D** leaves no limit at all."
            ),
        ),
    ],
)
