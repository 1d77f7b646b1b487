"""Quiz 1: structured tool errors (lesson 01), keyed to the exam guide's task statement 2.2."""

from __future__ import annotations

from grader.quizzes.model import Question, Quiz

QUIZ = Quiz(
    name="quiz01_structured_tool_errors",
    title="Quiz 1: Structured tool errors",
    intro=(
        "Ten scenarios from lesson 01: the error classes, the retry/escalate decision tree, an access failure "
        "beside a valid empty result, and local recovery in a subagent. Pick the one best answer to each, as "
        "the exam guide would answer it. Your feedback explains every answer."
    ),
    questions=[
        Question(
            id="q01",
            theme="errors",
            text=(
                "A support subagent calls `search_orders` for a customer who signed up yesterday. The result is "
                '`{"isError": false, "content": [{"type": "text", "text": "No orders match new@example.com."}], '
                '"structuredContent": {"orders": [], "count": 0}}`. What should the subagent report to the coordinator?'
            ),
            options={
                "A": "Nothing yet: retry with backoff, because the search index may still be catching up",
                "B": "That the customer has no orders: the search ran and matched nothing",
                "C": "That the search failed, so the coordinator can decide whether to retry it",
                "D": "Nothing yet: call `get_order` for each recent order id to be sure",
            },
            answer="B",
            explanation=(
                "**B.** `isError: false` with an empty list is a valid, ordinary answer, not an error. The exam guide warns "
                'that mixing "I could not run the query" with "the query returned zero rows" makes the coordinator retry '
                "for nothing or misreport the state to the user (*Exam guide › Local recovery in the subagent vs escalation "
                "to the coordinator*; *Exam guide › Exam emphases*). **A** and **C** treat a success as a failure: nothing "
                "failed, so there is nothing to retry or report as failed. **D** spends many calls to re-derive an answer "
                "the search already gave."
            ),
        ),
        Question(
            id="q02",
            theme="errors",
            text=(
                "A customer asks a chat assistant whether they have any open orders. The assistant's subagent runs with the "
                "desk's `guest` role, and its `search_orders` call returns `isError: true` with `errorCategory: "
                '"permission"`, `isRetryable: false`, `missingScope: "orders:read"`. What should happen next?'
            ),
            options={
                "A": "Tell the customer they have no open orders, since the search returned none",
                "B": "Retry the search with exponential backoff, in case an administrator grants `orders:read` to the role in a moment",
                "C": "Escalate with the missing scope and role; tell the customer the orders could not be checked yet",
                "D": "Re-plan: search again with the e-mail address written another way",
            },
            answer="C",
            explanation=(
                "**C.** A permission error is an access failure: the desk refused to look, so the agent knows nothing about "
                "the orders. The decision tree escalates a permission error to the coordinator with the missing scope or "
                "role (*Exam guide › Retryable vs non-retryable decision tree*), and the exam stresses telling an access "
                "failure from an empty result (*Exam guide › Exam emphases*). **A** reports an access failure as a valid "
                "empty result, the very confusion the guide warns about. **B**: permission is typically not retryable "
                "(*Exam guide › Error category taxonomy*); waiting grants nothing. **D** is the validation branch; the "
                "input was never the problem."
            ),
        ),
        Question(
            id="q03",
            theme="errors",
            text=(
                "A supervisor's subagent asks the payment tool for a USD 750 refund. The tool answers `isError: true` with "
                '`errorCategory: "business"`, `isRetryable: false`, `code: "REFUND_LIMIT_EXCEEDED"`, `limit: 500`, '
                "`requested: 750` and a `customerMessage`. What should the subagent do?"
            ),
            options={
                "A": "Retry the same refund up to three times with backoff",
                "B": "Send the same refund to the fallback payment endpoint",
                "C": "Split it on its own into a USD 500 and a USD 250 refund and send both",
                "D": "Surface the `customerMessage` and stop, without retrying",
            },
            answer="D",
            explanation=(
                "**D.** A broken business rule breaks again on every attempt: the tree says surface `customerMessage`, stop, "
                "do not retry (*Exam guide › Retryable vs non-retryable decision tree*); this is the guide's own $750 example "
                "(*Exam guide › The `isError` flag: schema and example*). **A** and **B** retry a non-retryable class; "
                "another endpoint applies the same policy. **C** treats a policy refusal as bad input to re-plan around: "
                "whether to split the refund or ask a manager is the customer's and the business's decision, which is why "
                "the result carries a message for the customer."
            ),
        ),
        Question(
            id="q04",
            theme="errors",
            text=(
                'A subagent calls `get_order` with `order_id: "1001"` and gets `isError: true`, `errorCategory: '
                '"validation"`, `isRetryable: false`, with the text "\'1001\' is not an order id. Order ids look like '
                'ORD-1234." What is the right next step?'
            ),
            options={
                "A": "Replay the same call after a short backoff",
                "B": "Escalate to a human at once: the tool rejected the request, and the agent cannot change what the tool accepts",
                "C": "Tell the user that order 1001 does not exist, since the tool found nothing under that id",
                "D": "Re-plan with corrected input, such as `ORD-1001` or a search by the customer's e-mail",
            },
            answer="D",
            explanation=(
                "**D.** Validation means the input is wrong: re-plan with corrected input and never replay the same call "
                "(*Exam guide › Retryable vs non-retryable decision tree*; *Exam guide › Error category taxonomy*). **A** "
                "replays a call that will fail the same way every time. **B** escalates something the agent can fix itself. "
                "**C** is wrong: the order was never looked up, so nothing is known about whether it exists."
            ),
        ),
        Question(
            id="q05",
            theme="errors",
            text=(
                "You write an MCP tool that queries a database. The database times out. How should the tool report this "
                "so that the model can recover?"
            ),
            options={
                "A": "Raise an exception, so the client receives a JSON-RPC error and the model knows the failure is serious",
                "B": '`isError: true` with `errorCategory: "transient"`, `isRetryable: true` and a text saying to retry shortly',
                "C": "`isError: false` with an empty result list, so the agent carries on",
                "D": '`isError: true` with only the text "Operation failed", so that no database details leak to the model or the user',
            },
            answer="B",
            explanation=(
                "**B.** Errors that come from the tool belong inside the result with `isError: true`; protocol (JSON-RPC) "
                "errors are invisible to the model and reserved for an unknown tool or a server without tool support "
                "(*Exam guide › The `isError` flag: schema and example*). A timeout is the `transient` class, typically "
                "retryable (*Exam guide › Error category taxonomy*). **A**: the model never sees a protocol error, and a "
                "thrown exception reaches the client as a generic call error (*Common mistakes › 5.1 Exceptions instead "
                "of statuses*). **C** reports a failure as a valid empty answer. **D** is the canonical wrong answer: "
                "without a category the agent must guess."
            ),
        ),
        Question(
            id="q06",
            theme="errors",
            text=(
                'A team\'s tools return `{"isError": true, "content": [{"type": "text", "text": "Operation failed"}]}` for '
                "every failure. Their agents sometimes hammer a tool in a loop and sometimes give up at once. What is the "
                "root cause?"
            ),
            options={
                "A": "The failures should be sent as JSON-RPC protocol errors instead of tool results, so the client stops the loop",
                "B": "The results should set `isError: false` when the cause is unknown",
                "C": "Without `errorCategory` and `isRetryable`, the agent must guess whether a retry can help",
                "D": "The results lack the stack trace and the failing query that the agent needs to debug the failure",
            },
            answer="C",
            explanation=(
                '**C.** The guide calls the bare "Operation failed" the canonical wrong answer: it forces the agent to retry '
                "blindly or to give up, and guessing whether a failure is worth retrying is the main cause of tool storms, "
                "runaway retry loops (*Exam guide › The `isError` flag: schema and example*; *Exam guide › Retryable vs "
                "non-retryable decision tree*; *Exam guide › Exam emphases*). **A** would hide the failure from the model "
                "altogether. **B** would report failures as successes. **D**: a stack trace is no category; the agent still "
                "cannot tell a retryable failure from one that is not."
            ),
        ),
        Question(
            id="q07",
            theme="errors",
            text=(
                'A subagent allows 3 attempts per call. Its third attempt at a read returns `errorCategory: "transient"`, '
                "`isRetryable: true` again, and it has no other endpoint and no cached copy. What should it do?"
            ),
            options={
                "A": "Escalate to the coordinator with the final category, what it tried and its partial results",
                "B": "Retry again: the server says the error is retryable",
                "C": "Report an empty result for this read and carry on",
                "D": "Double its own retry budget for this read and keep going, backing off each time, until the call succeeds",
            },
            answer="A",
            explanation=(
                "**A.** The tree caps local retries (e.g. 3); a subagent escalates when the class is not retryable or its "
                "local retry budget is spent, and the escalation carries the partial results and a log of what was tried "
                "(*Exam guide › Retryable vs non-retryable decision tree*; *Exam guide › Local recovery in the subagent vs "
                "escalation to the coordinator*). **B** and **D** ignore the cap, which is how retry storms start. **C** "
                "reports a failure as a valid empty answer and misleads the coordinator."
            ),
        ),
        Question(
            id="q08",
            theme="errors",
            text=(
                "A subagent refunding five orders refunds two, then the payment gateway stays down on both endpoints until "
                "its retries are spent. What should its escalation to the coordinator contain?"
            ),
            options={
                "A": "Only the last error text, so the coordinator's log stays short and readable",
                "B": "The original list of all five orders with their amounts, so the coordinator can simply run the whole batch again",
                "C": "The final category and retry flag, a log description, the two refunds made, and what was tried",
                "D": "The failed call's stack trace and the gateway's host name, for debugging",
            },
            answer="C",
            explanation=(
                "**C.** The guide's escalation envelope holds the final `errorCategory`/`isRetryable`, a description for the "
                "coordinator's log, the partial results gathered before the failure and what was tried (which endpoints, "
                "how many retries), so the coordinator does not repeat the work (*Exam guide › Local recovery in the "
                "subagent vs escalation to the coordinator*). **A** drops what the coordinator needs to decide. **B** "
                "invites re-running the batch, which would refund the first two orders twice. **D** is debugging detail, "
                "not what the coordinator acts on."
            ),
        ),
        Question(
            id="q09",
            theme="errors",
            text=(
                "The orders database stops answering. A subagent's reads of order ORD-1004 time out (`transient`, retryable) "
                "on the primary and the fallback endpoint until its retries are spent. It read the same order 20 minutes "
                "ago and kept the result. What is the best next step?"
            ),
            options={
                "A": "Answer from the cached read, saying it is from 20 minutes ago and may be out of date",
                "B": "Answer from the cached read as the order's current state",
                "C": "Escalate at the first timeout, before retrying, so the coordinator knows at once",
                "D": "Keep retrying past the cap until the database answers",
            },
            answer="A",
            explanation=(
                "**A.** Serving a stale cached read is one of the subagent's means of local recovery from transient "
                "failures, beside backoff and a fallback endpoint (*Exam guide › Local recovery in the subagent vs "
                "escalation to the coordinator*). Saying that it is stale keeps the reported state honest: passing an old "
                "read off as current misreports the state, which the same section warns against. **B** does exactly that. "
                "**C** escalates a transient failure the subagent should first try to recover from locally. **D** ignores "
                "the retry cap (*Exam guide › Retryable vs non-retryable decision tree*)."
            ),
        ),
        Question(
            id="q10",
            theme="errors",
            text=(
                '`get_order` for ORD-9999 returns `errorCategory: "not_found"`, `isRetryable: false`; this server also '
                "sets `isError: true` for that class. How should the agent treat the answer?"
            ),
            options={
                "A": "As a legitimate empty result: the order does not exist; no retry and no escalation",
                "B": "As a failure to escalate, because `isError` is true",
                "C": "As a transient failure: retry with backoff in case the order has not been replicated to this server yet",
                "D": "As a validation error: re-plan with another order id format",
            },
            answer="A",
            explanation=(
                "**A.** In the exam guide's taxonomy, `not_found` is a valid request with zero matches, typically not "
                "retryable, to be treated as a legitimate empty result rather than a failure; whether to set `isError` on "
                "it the guide calls debatable (*Exam guide › Error category taxonomy*). So the category decides, not the "
                "flag: **B** escalates a valid answer. **C** retries a class that is not retryable. **D**: the id was "
                "well-formed (ORD-NNNN); it simply matched nothing."
            ),
        ),
    ],
)
