"""Regenerate the sample submissions: ``python tests/submissions/make_samples.py [LAB ...]``.

Each sample is the released lab notebook with its answer cells filled in from the
solution, then one named mistake applied; or (``PARTIAL_FIXES``) the released notebook
as handed out with some of its flaws fixed. The expected outcome of every sample is
written by hand in ``expected.json``, not derived from this script.
"""

from __future__ import annotations

import copy
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from grader.notebook import MARKER, is_answer_cell
from grader.pipeline import Course
from solution_edits import occurrences, replace_once

# lab -> sample name -> [(text in the solution, replacement)]; each text must occur exactly once. The text is
# found by its code, whatever its layout (tests/solution_edits.py): a line the formatter wraps is still found.
# Every lab also gets a "solution" sample and a "blank" one (the release as handed out).
MISTAKES: dict[str, dict[str, list[tuple[str, str]]]] = {}

MISTAKES["lab1_error_results"] = {
    "retries_business_error": [
        (
            """return {"action": "surface_and_stop", "reason": f"Policy: {sc.get('customerMessage')}"}""",
            """return {"action": "retry", "reason": "It might go through next time."}""",
        )
    ],
    "replays_validation_error": [
        (
            """    if category == "transient":\n""",
            """    if category == "validation" and attempt < max_attempts:\n        return {"action": "retry", "reason": "Try the same call again."}\n    if category == "transient":\n""",
        )
    ],
    "empty_search_is_error": [
        (
            """return empty_result(f"No orders match {customer_email}. This is a valid answer.", key="orders")""",
            """return not_found_error(f"No orders match {customer_email}.", "NO_ORDERS")""",
        )
    ],
    "exception_text_as_success": [
        (
            """return transient_error(f"The payment gateway is unavailable ({exc}); nothing moved. Retry shortly.", retry_after_seconds=2.0, code="GATEWAY_UNAVAILABLE")""",
            """return success_result(str(exc), {"message": str(exc)})""",
        )
    ],
    "escalates_without_partial_results": [
        (""""partialResults": results,""", """"partialResults": [],""")
    ],
    "guesses_on_unclassified_errors": [
        (
            """return {"action": "escalate", "reason": "Unclassified error: no known errorCategory, so do not guess."}""",
            """return {"action": "retry", "reason": "Unknown failure; try again."}""",
        )
    ],
    # Mistakes that hide from one example: each passes the case a check names and fails on others of its kind.
    "business_code_fixed": [
        (
            """return error_result("business", message, code, False,""",
            """return error_result("business", message, "REFUND_LIMIT_EXCEEDED", False,""",
        )
    ],
    "empty_result_key_fixed": [
        (""""structuredContent": {key: []}}""", """"structuredContent": {"orders": []}}"""),
    ],
    "validates_before_permission": [
        (
            """    if not desk.caller.can("refunds:write"):
        return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write. Escalate.", "refunds:write", desk.caller.role)
    if not ORDER_ID.match(order_id):
        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")
    if amount_usd <= 0:
        return validation_error(f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be greater than 0")
""",
            """    if not ORDER_ID.match(order_id):
        return validation_error(f"{order_id!r} is not an order id; they look like ORD-1234.", "order_id", "must match ORD-NNNN")
    if amount_usd <= 0:
        return validation_error(f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be greater than 0")
    if not desk.caller.can("refunds:write"):
        return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write. Escalate.", "refunds:write", desk.caller.role)
""",
        )
    ],
    "search_without_permission_check": [
        (
            """def search_orders(desk, customer_email, status=None):
    if not desk.caller.can("orders:read"):
        return permission_error(f"Role {desk.caller.role} may not read orders: it lacks orders:read.", "orders:read", desk.caller.role)
""",
            """def search_orders(desk, customer_email, status=None):
""",
        )
    ],
    "refund_of_unknown_order_not_checked": [
        (
            """    if order is None:
        return not_found_error(f"There is no order {order_id}; nothing was refunded.", "ORDER_NOT_FOUND")
""",
            "",
        )
    ],
    "decide_reads_the_text": [
        (
            """    sc = result.get("structuredContent") or {}
    category = sc.get("errorCategory")
""",
            """    sc = result.get("structuredContent") or {}
    # The category, read from what the message says.
    text = " ".join(block.get("text", "") for block in result.get("content") or []).lower()
    category = None
    for name, words in (("not_found", ("no order", "not found")), ("transient", ("timed out", "retry", "unavailable")),
                        ("validation", ("must", "invalid")), ("permission", ("lacks", "permission")),
                        ("business", ("exceeds", "policy", "closed"))):
        if any(word in text for word in words):
            category = name
            break
""",
        )
    ],
    "retry_cap_fixed_in_recover": [
        ("""action = decide(last, attempt, max_attempts)["action"]""", """action = decide(last, attempt)["action"]"""),
    ],
    "fails_over_on_any_error": [
        (
            """                if (last.get("structuredContent") or {}).get("errorCategory") == "transient":
                    break
                return escalate(item, last)
""",
            """                break
""",
        )
    ],
    "ignores_the_retry_hint": [
        ("""sleep(retry_delay(last["structuredContent"], attempt))""", """sleep(backoff_delay(attempt))"""),
    ],
    "retry_count_per_item": [
        (
            """    for item in items:
        last = None
""",
            """    for item in items:
        last = None
        retries = 0
""",
        ),
    ],
    # Mistakes every visible check misses: each passes the cases the notebook shows and fails a hidden check.
    "retry_hint_in_whole_seconds": [
        ("""retryAfterSeconds=retry_after_seconds)""", """retryAfterSeconds=int(retry_after_seconds))"""),
    ],
    "empty_status_taken_as_no_filter": [
        ("""    if status is not None and status not in STATUSES:\n""", """    if status and status not in STATUSES:\n"""),
    ],
    "refund_of_the_whole_rest_refused": [
        ("""    if amount_usd > left:\n""", """    if amount_usd >= left:\n"""),
    ],
    "decide_needs_a_retry_hint": [
        (
            """return {"action": "retry", "reason": f"Transient and retryable; attempt {attempt + 1} of {max_attempts} after a backoff."}""",
            """return {"action": "retry", "reason": f"Transient and retryable; wait {sc['retryAfterSeconds']} s, then attempt {attempt + 1} of {max_attempts}."}""",
        )
    ],
    "retries_past_the_cap": [
        ("""if sc.get("isRetryable") is True and attempt < max_attempts:""", """if sc.get("isRetryable") is True and attempt != max_attempts:"""),
    ],
    "empty_answer_not_done_in_recover": [
        (
            """                if action in ("success", "empty_result"):\n                    results.append(""",
            """                if action == "success":\n                    results.append(""",
        )
    ],
    "fails_over_on_permission_errors": [
        (
            """                if (last.get("structuredContent") or {}).get("errorCategory") == "transient":\n                    break\n""",
            """                if action == "escalate":\n                    break\n""",
        )
    ],
}


MISTAKES["lab2_scopes_expansion"] = {
    "default_applied_to_empty_string": [
        ("""        if name in env:\n            return env[name]""", """        if env.get(name):\n            return env[name]"""),
    ],
    "project_beats_local": [
        ("""(("local", local), ("project", project), ("user", user))""", """(("project", project), ("local", local), ("user", user))"""),
    ],
    "field_merge_across_scopes": [
        (
            """            if name in result:\n                continue\n""",
            ("""            if name in result:\n                lower = expand_fields(entry, env, kind != "stdio")\n"""
            """                for key in ("env", "headers"):\n"""
            """                    if lower.get(key) and not result[name].get(key):\n"""
            """                        result[name][key] = lower[key]\n"""
            """                continue\n"""),
        ),
    ],
    "secret_committed": [
        (""""headers": {"Authorization": "Bearer ${TRACKER_TOKEN}"},""", """"headers": {"Authorization": "Bearer trk_live_4f9a1c2e7b"},"""),
    ],
    # Mistakes that hide from one example: each passes the named cases and fails on generated ones.
    "command_not_expanded": [
        ("""    for key in ("command", "args", "env", "url", "headers"):""", """    for key in ("args", "env", "url", "headers"):"""),
    ],
    "url_expanded_as_a_local_field": [
        ("""        blank = remote and key in ("url", "headers")""", """        blank = remote and key == "headers\""""),
    ],
    "values_expanded_again": [
        (
            """    return REFERENCE.sub(replace, text)""",
            """    expanded = REFERENCE.sub(replace, text)
    while expanded != text:  # expand what the values brought in too
        text, expanded = expanded, REFERENCE.sub(replace, expanded)
    return expanded""",
        ),
    ],
    "bare_dollar_expanded": [
        (
            """    return REFERENCE.sub(replace, text)""",
            """    text = REFERENCE.sub(replace, text)
    # $VAR without braces too, as in the shell
    return re.sub(r"\\$([A-Za-z_][A-Za-z0-9_]*)", lambda m: env.get(m.group(1), m.group(0)), text)""",
        ),
    ],
    "not_configured_after_expansion": [
        ("""                if entry["url"] == "":""", """                if expanded["url"] == "":"""),
    ],
    # Mistakes every visible check misses: each passes the cases the notebook shows and fails a hidden check.
    "credentials_of_the_visible_cases_only": [
        (
            """        if remote_field and name in CREDENTIAL_VARIABLES:""",
            """        if remote_field and name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN"):""",
        ),
    ],
    "skipped_entry_claims_its_name": [
        ("""    result = {}\n""", """    result = {}\n    claimed = set()\n"""),
        (
            """        for name, entry in servers.items():\n""",
            """        for name, entry in servers.items():\n            if name in claimed:\n                continue\n            claimed.add(name)\n""",
        ),
    ],
    "local_desk_shadows_the_team_desk": [
        ("""LOCAL_SERVERS = {\n    "desk-experiment": {""", """LOCAL_SERVERS = {\n    "desk": {"""),
    ],
}


MISTAKES["lab3_tools_resources"] = {
    "catalog_as_a_tool": [
        (
            """@server.resource(CATALOG_URI, name="catalog", description="Every runbook: id, title, service, severity.", mime_type="application/json")""",
            """@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))""",
        ),
    ],
    "side_effect_in_resource_read": [
        ("""def catalog() -> str:\n""", """def catalog() -> str:\n    STORE.add_note("ALERT-1", "catalog viewed")\n"""),
    ],
    "missing_template": [
        (
            """@server.resource(RUNBOOK_TEMPLATE, name="runbook", description="One runbook with its steps.", mime_type="application/json")\n""",
            "",
        ),
    ],
    "error_on_empty_catalog": [
        (
            """def catalog() -> str:\n""",
            """def catalog() -> str:\n    if not STORE.runbooks:\n        raise ResourceError("There are no runbooks yet.")\n""",
        ),
    ],
    # Mistakes that hide from one example: each passes the case a check names and fails on others of its kind.
    "catalog_capped_at_twenty": [
        ("""for r in STORE.runbooks]})""", """for r in STORE.runbooks[:20]]})"""),
    ],
    "catalog_with_the_steps": [
        ("""{k: r[k] for k in ("id", "title", "service", "severity")}""", """dict(r)"""),
    ],
    "unknown_runbook_read_as_null": [
        ("""    if found is None:\n        raise ResourceError(f"No runbook {runbook_id}")\n""", ""),
    ],
    "sev1_read_leaves_a_note": [
        (
            """    return json.dumps(found)""",
            """    if found["severity"] == "sev1":\n        STORE.add_note("ALERT-1", f"{runbook_id} was opened.")\n    return json.dumps(found)""",
        ),
    ],
    "acknowledged_by_a_fixed_person": [
        ("""changed = STORE.acknowledge(alert_id, by)""", """changed = STORE.acknowledge(alert_id, "on-call")"""),
    ],
    "unknown_alert_raises": [
        ("""    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    changed""", """    changed"""),
        ("""    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    count""", """    count"""),
    ],
    # Mistakes every visible check misses: only a hidden check, on cases the notebook does not show, catches them.
    "runbook_id_read_as_a_number": [
        (
            """found = STORE.runbook(runbook_id)""",
            """number = runbook_id.removeprefix("RB-")\n    found = STORE.runbook(f"RB-{int(number)}") if number.isdigit() else None""",
        ),
    ],
    "unknown_alert_judged_by_its_number": [
        (
            """    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    changed""",
            """    if int(alert_id.removeprefix("ALERT-")) > len(ALERTS):\n        return unknown_alert(alert_id)\n    changed""",
        ),
        (
            """    if alert_id not in ALERTS:\n        return unknown_alert(alert_id)\n    count""",
            """    if int(alert_id.removeprefix("ALERT-")) > len(ALERTS):\n        return unknown_alert(alert_id)\n    count""",
        ),
    ],
}


OUTLINE_RETURN = """    return result(f"{outline['title']} ({outline['published']}): {outline['summary']} Read it at {outline['url']}.", outline)"""

MISTAKES["lab4_server_integration"] = {
    "private_tool_left_in": [
        (
            """    return result(f"{outline['title']} ({outline['published']}): {outline['summary']} Read it at {outline['url']}.", outline)""",
            (
                """    return result(f"{outline['title']} ({outline['published']}): {outline['summary']} Read it at {outline['url']}.", outline)\n\n\n"""
                """@server.tool(annotations=READ_ONLY)\ndef seo_traffic_report(days: int = 7) -> dict:\n    \"\"\"Traffic.\"\"\"\n    return BLOG.traffic_report(days)"""
            ),
        )
    ],
    "long_name_kept": [
        ("def get_article(\n", "def get_article_outline_with_title_summary_and_section_headings_for_one_published_blog_post(\n")
    ],
    "exception_on_unknown_slug": [
        (
            """    try:\n        outline = BLOG.outline(slug)\n    except KeyError:\n""",
            """    outline = BLOG.outline(slug)\n    if outline is None:\n""",
        )
    ],
    "empty_search_is_error": [
        (
            """    if not hits:\n        text = f"No article of the blog matches {query!r}; this is a valid answer."\n""",
            (
                """    if not hits:\n        return failure("not_found", f"No article matches {query!r}.", False, code="NO_ARTICLES")\n"""
                """    if not hits:\n        text = f"No article of the blog matches {query!r}; this is a valid answer."\n"""
            ),
        )
    ],
    "snippets_without_pages": [
        ("for a in hits[start:start + PAGE_SIZE]]", "for a in hits]"),
        ("next_page = page + 1 if start + PAGE_SIZE < len(hits) else None", "next_page = None"),
    ],
    "fix_changes_answers": [
        ("start = (page - 1) * PAGE_SIZE", "start = page * PAGE_SIZE"),
    ],
    # Mistakes that hide from one example: each passes the case a check names and fails on others of its kind.
    "private_report_as_a_resource": [
        (
            OUTLINE_RETURN,
            OUTLINE_RETURN + '\n\n\n@server.resource("blog://traffic", name="traffic", description="The SEO agent\'s traffic report.", '
            'mime_type="application/json")\ndef traffic() -> str:\n    return str(BLOG.traffic_report(7))',
        )
    ],
    "private_report_as_a_prompt": [
        (
            OUTLINE_RETURN,
            OUTLINE_RETURN + '\n\n\n@server.prompt()\ndef traffic_review(days: str = "7") -> str:\n    """Review the blog\'s search traffic."""\n'
            '    return f"Review this traffic report and suggest topics: {BLOG.traffic_report(int(days))}"',
        )
    ],
    "private_tool_hidden_from_the_list": [
        (
            OUTLINE_RETURN,
            OUTLINE_RETURN + '\n\n\n@server.tool(annotations=READ_ONLY)\ndef seo_traffic_report(days: int = 7) -> dict:\n    """Traffic."""\n'
            "    return BLOG.traffic_report(days)\n\n\n_every_tool = server.list_tools\n\n\nasync def public_tools_only():\n"
            "    return [tool for tool in await _every_tool() if tool.name in PUBLIC_TOOLS]\n\n\nserver.list_tools = public_tools_only",
        )
    ],
    "later_pages_unbounded": [
        ("for a in hits[start:start + PAGE_SIZE]]", "for a in (hits[:PAGE_SIZE] if page == 1 else hits[start:])]"),
        ("next_page = page + 1 if start + PAGE_SIZE < len(hits) else None", "next_page = 2 if page == 1 and len(hits) > PAGE_SIZE else None"),
    ],
    "hits_without_title_and_date": [
        ("f\"- {h['slug']}: {h['title']} ({h['published']}): {h['snippet']}\"", "f\"- {h['slug']}: {h['snippet']}\""),
        ('"slug": a["slug"], "title": a["title"], "published": a["published"], "snippet"', '"slug": a["slug"], "snippet"'),
    ],
    "only_spaces_count_as_blank": [
        ("    if not query.strip():", '    if not query.strip(" "):'),
    ],
    # Mistakes every visible check misses: each passes the cases the notebook shows and fails a hidden check.
    "private_report_as_a_template": [
        (
            OUTLINE_RETURN,
            OUTLINE_RETURN + '\n\n\n@server.resource("blog://traffic/{days}", name="traffic", description="The SEO agent\'s traffic report '
            'for the last days.", mime_type="application/json")\ndef traffic(days: str) -> str:\n    return str(BLOG.traffic_report(int(days)))',
        )
    ],
    "only_search_articles_annotated_and_described": [
        ("@server.tool(annotations=READ_ONLY)\ndef get_article(", "@server.tool()\ndef get_article("),
        (
            '''    """Get one article of the team's engineering blog as an outline: title, date, summary, section headings, URL.

    Call it when the user wants to know what an article found by search_articles covers. Returns the outline, not
    the full text: give the user the URL to read it. An unknown slug is a not_found error: search again.
    """''',
            '    """Article outline."""',
        ),
    ],
    "no_match_of_known_words_is_not_found": [
        (
            "    if not hits:\n        text =",
            (
                '    if not hits and all(BLOG.search(word) for word in query.split()):\n'
                '        return failure("not_found", f"No article has all the words of {query!r}; search for fewer of them.", False,\n'
                '                       code="NO_ARTICLE_WITH_ALL_WORDS")\n    if not hits:\n        text ='
            ),
        )
    ],
    "visible_questions_special_cased": [
        (
            "    if not query.strip():\n",
            (
                '    if query not in ("rag pitfalls", "kubernetes helm", "team", "   ", "rag", "quantum"):\n'
                '        return result("No article matches.", {"articles": [], "page": page, "nextPage": None, "total": 0})\n'
                "    if not query.strip():\n"
            ),
        )
    ],
}

# Partial fixes: edits applied to the starting code the release hands out (lab 4 only).
PARTIAL_FIXES: dict[str, dict[str, list[tuple[str, str]]]] = {
    "lab4_server_integration": {
        "removed_private_tool_only": [
            (
                """\n\n\n@server.tool()\ndef seo_traffic_report(days: int = 7) -> dict:\n    \"\"\"Traffic.\"\"\"\n    return BLOG.traffic_report(days)""",
                "",
            )
        ],
        "renamed_and_annotated": [
            (
                """\n\n\n@server.tool()\ndef seo_traffic_report(days: int = 7) -> dict:\n    \"\"\"Traffic.\"\"\"\n    return BLOG.traffic_report(days)""",
                "",
            ),
            (
                """@server.tool()\ndef search_articles""",
                (
                    """READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)\n\n\n"""
                    """@server.tool(annotations=READ_ONLY)\ndef search_articles"""
                ),
            ),
            (
                """@server.tool()\ndef get_article_outline_with_title_summary_and_section_headings_for_one_published_blog_post(""",
                """@server.tool(annotations=READ_ONLY)\ndef get_article(""",
            ),
        ],
    }
}


def solution_sources(source: Path) -> dict[str, str]:
    nb = nbformat.read(str(source), as_version=4)
    return {
        cell.metadata.nbgrader["grade_id"]: "\n".join(line for line in cell.source.splitlines() if not MARKER.match(line))
        for cell in nb.cells
        if is_answer_cell(cell)
    }


def apply(lab: str, student: str, nb, edits: list[tuple[str, str]]) -> None:
    for old, new in edits:
        hits = [cell for cell in nb.cells if is_answer_cell(cell) and occurrences(cell.source, old)]
        if len(hits) != 1 or occurrences(hits[0].source, old) != 1:
            raise SystemExit(f"{lab}/{student}: the text to replace must occur exactly once: {old!r}")
        hits[0].source = replace_once(hits[0].source, old, new)


def released_with_solutions(labs: list[str]) -> dict[str, dict[str, nbformat.NotebookNode]]:
    """Release ``labs`` as the course does: lab -> {"release": the released notebook as handed
    out, "solution": the released notebook with its answer cells filled in from the solution}.

    Every sample of a lab (and every hostile case, ``tests/hostile/make_hostile.py``) starts
    from one of the two; they are shared, so copy one before editing it.
    """
    notebooks = {}
    with tempfile.TemporaryDirectory() as tmp:
        course_root = Path(tmp) / "course"
        shutil.copytree(REPO / "labs" / "source", course_root / "source")
        Course(course_root).release(labs)
        for lab in labs:
            released = course_root / "release" / lab / f"{lab}.ipynb"
            answers = solution_sources(REPO / "labs" / "source" / lab / f"{lab}.ipynb")
            solved = nbformat.read(str(released), as_version=4)
            for cell in solved.cells:
                if is_answer_cell(cell):
                    cell.source = answers[cell.metadata.nbgrader["grade_id"]]
            notebooks[lab] = {"release": nbformat.read(str(released), as_version=4), "solution": solved}
    return notebooks


def main(labs: list[str]) -> None:
    unknown = sorted(set(labs) - set(MISTAKES))
    if unknown:
        raise SystemExit(f"No samples are defined for {', '.join(unknown)}; labs with samples: {', '.join(MISTAKES)}.")
    labs = labs or list(MISTAKES)
    for lab, bases in released_with_solutions(labs).items():
        # (student, what the edits apply to, edits): the release as handed out, or the solution
        samples = [("blank", "release", []), ("solution", "solution", [])]
        samples += [(student, "solution", edits) for student, edits in MISTAKES[lab].items()]
        samples += [(student, "release", edits) for student, edits in PARTIAL_FIXES.get(lab, {}).items()]
        for student, base, edits in samples:
            nb = copy.deepcopy(bases[base])
            apply(lab, student, nb, edits)
            out = HERE / student / lab / f"{lab}.ipynb"
            out.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(out))
            print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main(sys.argv[1:])
