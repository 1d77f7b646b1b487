"""Command-line entry points: decide, resolve, check-server, and the grading pipeline over nbgrader."""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from grader.decisions import DEFAULT_MAX_ATTEMPTS, MalformedResult, decide
from grader.errors import PipelineError


class UsageError(Exception):
    """A mistake the person at the keyboard can fix; its text says how."""


def cmd_decide(args: argparse.Namespace) -> int:
    source = sys.stdin if args.file == "-" else None
    where = "standard input" if source else args.file
    try:
        text = source.read() if source else Path(args.file).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"Cannot read {where}: {exc.strerror}. Give the path of a JSON file holding one CallToolResult."
        ) from None
    except UnicodeDecodeError:
        raise UsageError(f"{where} is not UTF-8 text. Give a JSON file holding one CallToolResult.") from None
    try:
        result = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{where} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            'Give one CallToolResult in wire format, e.g. {"isError": true, "content": [...], "structuredContent": {...}}.'
        ) from None
    if args.attempt < 1 or args.max_attempts < 1 or args.attempt > args.max_attempts:
        raise UsageError("--attempt and --max-attempts count from 1, and --attempt may not exceed --max-attempts.")
    try:
        decision = decide(result, args.attempt, args.max_attempts)
    except MalformedResult as exc:
        raise UsageError(f"{where} does not hold a CallToolResult: {exc}.") from None
    print(json.dumps(decision.to_json(), indent=2))
    return 0


def parse_env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--env takes KEY=VALUE, got {pair!r}.")
        env[key] = value
    return env


def describe_server(name: str, server: dict, written: dict) -> list[str]:
    """A server as `claude mcp get` shows it: references by name (defaults dropped), never resolved values."""
    from grader.expansion import display

    status = f", {server['approval']}" if "approval" in server else ""
    status += {"not_configured": ", not configured", "disabled": ", disabled for this project"}.get(
        server.get("status"), ""
    )
    lines = [f"{name}  ({server['scope']} scope, {server['type']}{status})"]
    if "url" in server and server["scope"] == "managed":
        # For an organisation's managed server Claude Code shows only the URL's host
        # (Claude Code docs, MCP › How references are shown in /mcp and CLI output).
        lines.append(f"  host: {urlsplit(written.get('url', '')).hostname or '(none)'}")
    elif "url" in server:
        lines.append(f"  url: {display(written.get('url', ''))}")
        for key, value in (written.get("headers") or {}).items():
            lines.append(f"  header {key}: {display(value)}")
    else:
        lines.append(
            f"  command: {display(' '.join([written.get('command', ''), *map(str, written.get('args') or [])]))}"
        )
        for key, value in (written.get("env") or {}).items():
            lines.append(f"  env {key}={display(value)}")
    return lines


def cmd_resolve(args: argparse.Namespace) -> int:
    from grader.scopes import ConfigError, resolve

    for label, path in (("--home", args.home), ("--project", args.project)):
        if not path.is_dir():
            raise UsageError(f"{label} {path} is not a folder.")
    try:
        res = resolve(
            args.home,
            args.project,
            parse_env(args.env),
            plugins=args.plugin,
            connectors=args.connectors,
            managed=args.managed,
        )
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if not args.readable:
        print(json.dumps(res.to_json(), indent=2, ensure_ascii=False))
        return 0
    for name, server in res.servers.items():
        print("\n".join(describe_server(name, server, res.configured[name])))
    if res.skipped:
        print("\nskipped:")
        for s in res.skipped:
            print(f"  {s['name']} ({s['scope']}): {s['reason']}")
    if res.warnings:
        print("\nwarnings:")
        for w in res.warnings:
            print(f"  {w['server']} ({w['scope']}, {w['kind']}): {w['message']}")
    print("\nwhy:")
    for sentence in res.explanations:
        print(f"  {sentence}")
    return 0


def _course(args: argparse.Namespace, make: bool = False):
    """The course of ``--course``. An installed course's default folder (``./labs``) is made from the package's copy
    when ``make`` (release) and it is not there yet; otherwise its absence is explained with what to do."""
    from grader import content
    from grader.pipeline import Course, PipelineError

    folder = Path(args.course)
    if content.CHECKOUT is None and folder == content.default_course() and not (folder / "source").is_dir():
        if not make:
            raise PipelineError(
                f"There is no course folder here ({folder} has no source/): run `{args.prog} release` in this folder "
                "first, which makes it from the installed course's labs, or pass --course with your course folder."
            )
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copytree(content.COURSE / "source", folder / "source")
        if not (folder / "nbgrader_config.py").exists():
            shutil.copy2(content.COURSE / "nbgrader_config.py", folder / "nbgrader_config.py")
        print(f"made the course folder {folder} from the installed course's labs", file=sys.stderr)
    return Course(folder)


def cmd_release(args: argparse.Namespace) -> int:
    course = _course(args, make=True)
    course.check_gradebook()
    due = course.parse_due(args.due) if args.due is not None else None  # before anything is released
    if args.exchange:  # before anything is released
        for lab in args.labs or course.labs():
            course.check_lab(lab)
            course.check_exchange_release(lab, force=args.force)
    for path in course.release(args.labs or None):
        print(f"released {path.name} -> {path}")
        if due is not None:
            course.set_due(path.name, due)
            print(f"{path.name} is due {course.show_time(due)} ({due:%Y-%m-%d %H:%M} UTC)")
        if args.exchange:
            print(f"released {path.name} to the exchange -> {course.release_to_exchange(path.name, force=args.force)}")
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
    course = _course(args)
    course.check_lab(args.lab)
    course.check_gradebook()
    collected = course.collect_from_exchange(args.lab)
    for student, stamp in collected:
        print(f"collected {student}/{args.lab} (submitted {stamp or 'at an unknown time'})")
    where = course.root / "submitted"
    if not collected:
        print(f"nothing new to collect for {args.lab}: every submission in the exchange is already in {where}")
        return 0
    print(
        f"{len(collected)} submission(s) of {args.lab} are in {where}; grade them with: "
        f"python -m grader autograde {where} --lab {args.lab} --course {course.settings.folder}"
    )
    return 0


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def positive_seconds(text: str) -> float:
    """argparse type: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):  # NaN fails both comparisons
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0 (for example 5 or 2.5)")
    return value


def cmd_autograde(args: argparse.Namespace) -> int:
    if not args.scheduler:
        from grader.engine import checks_process, forkserver

        # The checks' process starts the learner hosts' fork server and imports the checks while this one imports
        # nbgrader; the batch's checks run there, and this process records them.
        checks_process.begin()
        if checks_process.shared() is None:
            forkserver.begin()
    from grader.engine import grading

    grading.measure_isolation_soon()  # the sandbox's probe, waited for in a thread while this one imports nbgrader
    from grader.engine.batch import SchedulerUnavailable
    from grader.pipeline import format_gradebook, format_not_graded

    course = _course(args)
    if args.lab:
        course.check_lab(args.lab)
    course.check_gradebook()
    if args.require_sandbox:
        course.require_sandbox()  # before anything is copied or graded
    course.late_policy()  # a late-penalty setting nbgrader cannot use stops the run before anything is copied
    pairs = course.collect(args.submissions, args.lab)
    skipped = course.skipped
    try:
        outcomes = course.autograde(
            pairs,
            jobs=args.jobs,
            scheduler=args.scheduler,
            progress=sys.stderr,
            call_timeout=args.call_timeout,
            require_sandbox=args.require_sandbox,
        )
    except SchedulerUnavailable as exc:
        raise UsageError(str(exc)) from None
    course.record_outcomes(skipped)
    failed = [o for o in outcomes if not o.ok] + skipped
    for o in failed:
        print(f"not graded {o.student}/{o.lab}: {o.message}", file=sys.stderr)
    graded = sum(o.ok for o in outcomes)
    print(f"autograded {graded} of {len(outcomes) + len(skipped)} submission(s)")
    print(format_gradebook(course.gradebook()))
    # The course's list, then what this run passed over without changing anything of the course's for it.
    listed = format_not_graded(course.not_graded() + [o for o in skipped if not o.listed])
    if listed:
        print(f"\n{listed}")
    if failed:
        print(
            f"{graded} submission(s) were graded and saved in the gradebook; {len(failed)} were not graded: "
            "fix or replace each as its line above says and run autograde again.",
            file=sys.stderr,
        )
    return 1 if failed else 0


def cmd_feedback(args: argparse.Namespace) -> int:
    course = _course(args)
    course.require_gradebook()
    pairs = [(r["student"], r["lab"]) for r in course.gradebook()]
    paths, failures = course.feedback(pairs)
    for path in paths:
        print(f"feedback {path}")
    # A submission that was not graded gets a page saying so and why, never one that reads as a score of 0.
    notes = course.not_graded_notes()
    for o, note in notes:
        print(f"not graded {o.student}/{o.lab}, so {note} says so instead of feedback: {o.message}")
    for o in failures:
        print(f"no feedback for {o.student}/{o.lab}: {o.message}", file=sys.stderr)
    if failures:
        print(
            f"{len(paths)} feedback page(s) were written; autograde the {len(failures)} submission(s) above again, "
            "then run feedback again.",
            file=sys.stderr,
        )
        return 1
    if args.release:
        pages = [(p.parts[-3], p.parts[-2]) for p in paths] + [(o.student, o.lab) for o, _ in notes]
        released, unreleased = course.release_feedback(pages)
        for student, lab in released:
            print(f"released the feedback of {student}/{lab} to the exchange")
        for o in unreleased:
            print(f"feedback of {o.student}/{o.lab} not released: {o.message}", file=sys.stderr)
        if unreleased:
            print(
                f"{len(released)} feedback page(s) were released to the exchange; {len(unreleased)} were not, "
                "as each line above says.",
                file=sys.stderr,
            )
            return 1
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    course = _course(args)
    print(f"grades written to {course.export(args.to)}")
    if args.canvas is not None:
        from grader.canvas import export_canvas

        print(f"Canvas grades written to {export_canvas(course, args.canvas)}")
    return 0


def cmd_gradebook(args: argparse.Namespace) -> int:
    from grader.pipeline import format_gradebook, format_not_graded

    course = _course(args)
    print(format_gradebook(course.gradebook()))
    listed = format_not_graded(course.not_graded())
    if listed:
        print(f"\n{listed}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from grader.report import write_report

    report, path = write_report(_course(args), args.out, alike_threshold=args.alike_threshold)
    print(f"report written to {path}")
    if report.empty:
        print(report.empty_sentence)
    return 0


# The demo course's own exchange, beside its gradebook, so formgrader on it can release and collect.
DEMO_EXCHANGE = """

# The demo course (python -m grader demo) has an exchange of its own, beside it.
import os

c.Exchange.root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exchange")
"""

# The demo's roster: sample submissions are named for their mistake, learners have names (first, last).
FIRST_NAMES = (
    "Ada",
    "Bilal",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ines",
    "Jonas",
    "Kemal",
    "Lena",
    "Mateo",
)
LAST_NAMES = (
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Nakamura",
    "Petrov",
    "Quispe",
    "Rossi",
    "Silva",
    "Tanaka",
    "Usman",
    "Weber",
)


def demo_roster(students: Sequence[str]) -> dict[str, tuple[str, str]]:
    """A first and last name for each student id, distinct for up to 143 students (13 and 11 share no factor)."""
    return {
        student: (FIRST_NAMES[i % len(FIRST_NAMES)], LAST_NAMES[i % len(LAST_NAMES)])
        for i, student in enumerate(sorted(students))
    }


def build_demo(work: Path, samples: Path, progress=None) -> tuple[object, list]:
    """A fresh course in ``work``: the repository's labs and quizzes with its configuration and an exchange of its
    own, each released there, the sample submissions autograded (their students named), feedback, grades, report.
    Returns the course and the autograde outcomes."""
    import shutil

    from grader.pipeline import DEFAULT_COURSE, Course
    from grader.report import write_report

    work = Path(work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copytree(DEFAULT_COURSE / "source", work / "source")
    config = (DEFAULT_COURSE / "nbgrader_config.py").read_text(encoding="utf-8")
    (work / "nbgrader_config.py").write_text(config.rstrip("\n") + "\n" + DEMO_EXCHANGE, encoding="utf-8")
    (work / "exchange").mkdir()
    course = Course(work)
    for path in course.release():
        course.release_to_exchange(path.name)
        print(f"released {path.name}")
    pairs = course.collect(samples)
    course.name_students(demo_roster(sorted({student for student, _ in pairs})))
    outcomes = course.autograde(pairs, progress=progress)
    for o in outcomes:
        if not o.ok:
            print(f"not graded {o.student}/{o.lab}: {o.message}", file=sys.stderr)
    _, failures = course.feedback(pairs)
    for o in failures:
        print(f"no feedback for {o.student}/{o.lab}: {o.message}", file=sys.stderr)
    course.export(work / "grades.csv")
    write_report(course, work / "report.html")
    return course, outcomes


def cmd_demo(args: argparse.Namespace) -> int:
    """Release every lab into a fresh course, autograde the bundled samples, write feedback, grades and the report."""
    from grader.pipeline import SAMPLE_SUBMISSIONS, format_gradebook

    course, outcomes = build_demo(args.work, SAMPLE_SUBMISSIONS, progress=sys.stderr)
    work = course.root
    print(format_gradebook(course.gradebook()))
    print(f"feedback in {work / 'feedback'}; grades in {work / 'grades.csv'}; cohort report in {work / 'report.html'}")
    jupyter = Path(sys.executable).parent / "jupyter"
    print(f"formgrader on this course (Nbgrader > Formgrader in JupyterLab): cd {work} && {jupyter} lab")
    return 0 if all(o.ok for o in outcomes) else 1


def cmd_check_server(args: argparse.Namespace) -> int:
    """Check one server (a stdio command or a URL) against the pre-launch rules; print the table, the checklist or JSON."""
    from grader.checker.checklist import FAIL, checklist, checklist_table
    from grader.checker.connect import command_params, mcp_json_params
    from grader.checker.findings import CheckInputError, load_samples, parse_names
    from grader.checker.http_rules import parse_headers
    from grader.server_check import check_server, check_url

    if args.burst is not None and args.burst < 1:
        raise UsageError("--burst counts requests: give a whole number from 1.")
    if args.url is None and (args.header or args.burst or args.behind_proxy):
        raise UsageError("--header, --burst and --behind-proxy apply to a server checked over HTTP: give --url.")
    try:
        samples = load_samples(args.sample) if args.sample else []
        common = {
            "expected_tools": parse_names(args.expect),
            "read_only": parse_names(args.read_only),
            "samples": samples,
            "plugin": args.plugin,
            "timeout": args.timeout,
        }
        if args.url is not None:
            report = check_url(
                args.url,
                server_name=args.name,
                headers=parse_headers(args.header),
                burst=args.burst,
                behind_proxy=args.behind_proxy,
                **common,
            )
        else:
            if args.command_line is not None:
                params = command_params(args.command_line, cwd=args.project)
            else:
                params = mcp_json_params(args.mcp_json_server, project=args.project, home=args.home)
            report = check_server(params, server_name=args.name or args.mcp_json_server, **common)
    except CheckInputError as exc:
        raise UsageError(str(exc)) from None
    if args.checklist:
        lines = checklist(report)
        if args.json:
            print(json.dumps([line.to_json() for line in lines], indent=2, ensure_ascii=False))
        else:
            print(checklist_table(lines, report.server))
        return 1 if any(line.result == FAIL for line in lines) else 0
    print(json.dumps(report.to_json(), indent=2, ensure_ascii=False) if args.json else report.table())
    return 0 if report.ok else 1


def cmd_init(args: argparse.Namespace) -> int:
    """Copy the lessons and the learner version of every lab and quiz into a working folder."""
    from grader.workspace import init_workspace

    done = init_workspace(args.folder, say=lambda line: print(line, file=sys.stderr))
    print(
        f"{len(done.written)} files written to {done.root}"
        + (f"; {len(done.kept)} already there kept as they were" if done.kept else "")
    )
    print(f"open it: {args.prog} start {done.root}")
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    """Set up the working folder if it is not there yet, then open JupyterLab in it."""
    import os

    from grader.workspace import FIRST_LESSON, init_workspace

    folder = Path(args.folder).resolve()
    if not (folder / FIRST_LESSON).exists():
        init_workspace(folder, say=lambda line: print(line, file=sys.stderr))
    jupyter_args = list(args.jupyter_args)
    if jupyter_args[:1] == ["--"]:
        jupyter_args = jupyter_args[1:]
    command = [sys.executable, "-m", "jupyter", "lab", *(jupyter_args or [FIRST_LESSON])]
    print(f"starting JupyterLab in {folder}: {' '.join(command[1:])}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(folder)
    os.execv(sys.executable, command)
    return 0  # not reached: JupyterLab replaces this process


# One example for each subcommand's --help.
EXAMPLES = {
    "decide": "{prog} decide result.json --attempt 2",
    "resolve": "{prog} resolve --home ~ --project . --readable",
    "check-server": '{prog} check-server --command "python -m servers.tracker" --checklist',
    "release": '{prog} release lab1_error_results --due "2026-12-10 17:00" --exchange',
    "collect": "{prog} collect lab1_error_results",
    "autograde": "{prog} autograde labs/submitted --require-sandbox",
    "feedback": "{prog} feedback --release",
    "export": "{prog} export --to grades.csv --canvas canvas.csv",
    "gradebook": "{prog} gradebook --course labs",
    "report": "{prog} report --out report.html",
    "demo": "{prog} demo --work build/demo-course",
    "init": "{prog} init ~/mcp-course",
    "start": "{prog} start ~/mcp-course -- --no-browser --port 8890",
}


def build_parser(prog: str = "python -m grader") -> argparse.ArgumentParser:
    from grader.similarity import SIMILARITY_THRESHOLD

    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.set_defaults(prog=prog)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "decide", help="Walk the retry/escalate decision tree for one CallToolResult (wire-format JSON)."
    )
    p.add_argument("file", help="A JSON file holding one CallToolResult, or - for standard input.")
    p.add_argument("--attempt", type=int, default=1, help="Which attempt produced this result (from 1; default 1).")
    p.add_argument(
        "--max-attempts",
        type=int,
        default=DEFAULT_MAX_ATTEMPTS,
        help=f"The retry cap (default {DEFAULT_MAX_ATTEMPTS}).",
    )
    p.set_defaults(run=cmd_decide)

    p = sub.add_parser("resolve", help="Resolve the effective MCP servers of a project as Claude Code would, as JSON.")
    p.add_argument(
        "--home", type=Path, required=True, help="The home folder holding .claude.json and .claude/settings.json."
    )
    p.add_argument("--project", type=Path, required=True, help="The project root (where .mcp.json lives).")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="One environment variable; the only environment used.",
    )
    p.add_argument(
        "--plugin",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="A plugin folder with .mcp.json or plugin.json.",
    )
    p.add_argument("--connectors", type=Path, help='A JSON file {"mcpServers": {...}} of claude.ai connectors.')
    p.add_argument(
        "--managed", type=Path, help='A JSON file of managed servers ({"mcpServers": {...}} or managedMcpServers).'
    )
    p.add_argument(
        "--readable", action="store_true", help="Explain each decision in sentences instead of printing JSON."
    )
    p.set_defaults(run=cmd_resolve)

    p = sub.add_parser(
        "check-server",
        help="Check one MCP server (started over stdio, or at a URL) against the pre-launch rules (whitelist, annotations, "
        "descriptions, names, schemas, sample results; over HTTP also JSON not HTML, no cookies, rate limits); exit 1 when "
        "a required rule fails. --checklist: the article's 13-item pre-launch checklist instead.",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--url", help="The MCP endpoint of a Streamable HTTP server, e.g. http://127.0.0.1:8000/mcp.")
    which.add_argument(
        "--command",
        dest="command_line",
        metavar="CMD",
        help='The server\'s command line, e.g. "python -m servers.support_desk".',
    )
    which.add_argument(
        "--mcp-json-server",
        metavar="NAME",
        help="A stdio server of the project's .mcp.json, by name, resolved as Claude Code would.",
    )
    p.add_argument("--project", type=Path, help="The project folder (default: the current one); the server runs there.")
    p.add_argument(
        "--home",
        type=Path,
        help="The home folder whose ~/.claude.json counts too (default: none, an empty temporary home).",
    )
    p.add_argument(
        "--name",
        help="The server name Claude Code uses in mcp__<name>__<tool> (default: the --mcp-json-server name, else the name the server reports).",
    )
    p.add_argument("--expect", metavar="TOOL,...", help="The tools the server should publish, exactly (the whitelist).")
    p.add_argument(
        "--read-only", metavar="TOOL,...", help="The read-only tools (default: tools named get_, list_, search_)."
    )
    p.add_argument(
        "--sample",
        metavar="JSON_FILE",
        help='Sample calls: [{"tool": ..., "arguments": {...}, "expect": "error|empty|ok"}, ...].',
    )
    p.add_argument(
        "--plugin", help="Also check the plugin form mcp__plugin_<plugin>_<server>__<tool> for this plugin name."
    )
    p.add_argument("--timeout", type=float, default=30.0, help="Seconds to wait for each answer (default 30).")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="With --url: a header for every request, e.g. 'Authorization: Bearer ...'.",
    )
    p.add_argument(
        "--burst",
        type=int,
        metavar="N",
        help="With --url: send up to N requests in a row and expect 429 with Retry-After (run last).",
    )
    p.add_argument(
        "--behind-proxy",
        action="store_true",
        help="With --url: the requests reach the server through a proxy it trusts, so the burst tells clients apart by CF-Connecting-IP and X-Forwarded-For.",
    )
    p.add_argument(
        "--checklist",
        action="store_true",
        help="Print the 13-item pre-launch checklist: pass, FAIL or answer yourself.",
    )
    p.add_argument(
        "--json", action="store_true", help="Print the report (or the checklist) as JSON instead of a table."
    )
    p.set_defaults(run=cmd_check_server)

    def with_course(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        from grader import content

        default = content.default_course()
        p.add_argument(
            "--course",
            type=Path,
            default=default,
            help=f"The nbgrader course folder (default {default}"
            + ("" if content.CHECKOUT is not None else ", made from the installed course's labs on the first release")
            + ").",
        )
        return p

    p = with_course(
        sub.add_parser(
            "release",
            help="Check each lab's solution earns every point (and each quiz's notebook is the one its questions make), then generate the learner version.",
        )
    )
    p.add_argument("labs", nargs="*", help="Labs, quizzes or mock_exam to release (default: all).")
    p.add_argument(
        "--due",
        metavar='"YYYY-MM-DD HH:MM [ZONE]"',
        help="The labs' due date, stored in the gradebook as `nbgrader db assignment add --duedate` does; without a zone, "
        "in the course's timezone (NbGraderAPI.timezone). Late submissions lose what the late-penalty setting says.",
    )
    p.add_argument(
        "--exchange",
        action="store_true",
        help="Then release each lab to nbgrader's exchange (Exchange.root, under the course id), where learners fetch it.",
    )
    p.add_argument("--force", action="store_true", help="With --exchange: replace a lab already in the exchange.")
    p.set_defaults(run=cmd_release)

    p = with_course(
        sub.add_parser(
            "collect",
            help="Collect each learner's latest submission of a lab from nbgrader's exchange into <course>/submitted.",
        )
    )
    p.add_argument("lab", help="The lab (or quiz) to collect.")
    p.set_defaults(run=cmd_collect)

    p = with_course(
        sub.add_parser("autograde", help="Grade a folder of submissions laid out as <student>/<lab>/<lab>.ipynb.")
    )
    p.add_argument(
        "submissions",
        type=Path,
        help="The folder of submissions: the course's submitted/ (or a student's folder in it), graded in place, or any "
        "folder laid out as <student>/<lab>/, copied into the course's submitted/.",
    )
    p.add_argument("--lab", help="Grade only this lab (or quiz).")
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        help="Submissions graded at once: three by the checks' process this command starts beside itself, and one by each further worker process (default: 3, and one more worker process for every 64 submissions, up to the number of cores; starting a worker process costs about as much as grading a dozen submissions).",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Grade on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:PORT); needs the dask extra.",
    )
    p.add_argument(
        "--call-timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="Seconds one call into a learner's code may take before it counts as hung (default 5).",
    )
    p.add_argument(
        "--require-sandbox",
        action="store_true",
        help="Refuse to grade unless learner code runs with every protection of the sandbox: a user of its own, its own "
        "view of the files, no network, other processes hidden (Linux, as root). Use it for a real cohort.",
    )
    p.set_defaults(run=cmd_autograde, interrupted=AUTOGRADE_INTERRUPTED)

    p = with_course(sub.add_parser("feedback", help="Write each graded submission's feedback as HTML."))
    p.add_argument(
        "--release",
        action="store_true",
        help="Then release each page to nbgrader's exchange, where its learner fetches it (nbgrader fetch_feedback).",
    )
    p.set_defaults(run=cmd_feedback)

    p = with_course(sub.add_parser("export", help="Export the gradebook to CSV in nbgrader's format."))
    p.add_argument("--to", type=Path, default=Path("grades.csv"), help="The CSV file to write (default grades.csv).")
    p.add_argument(
        "--canvas",
        type=Path,
        metavar="CSV",
        help="Also write the grades in Canvas's gradebook import format to this file (matched on SIS Login ID, the student id).",
    )
    p.set_defaults(run=cmd_export)

    p = with_course(
        sub.add_parser("gradebook", help="Print every graded submission's score, and what was not graded, with why.")
    )
    p.set_defaults(run=cmd_gradebook)

    p = with_course(
        sub.add_parser(
            "report",
            help="Write the cohort report: score distribution per lab, pass rate per check, most common mistakes, points per theme of a quiz.",
        )
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("report.html"),
        help="The report file: .html (histograms embedded) or .md (histograms as PNG files beside it); default report.html.",
    )
    p.add_argument(
        "--alike-threshold",
        type=float,
        default=SIMILARITY_THRESHOLD,
        help="How alike (above 0, at most 1) two learners' answers must be to be listed as near-identical (default 0.8).",
    )
    p.set_defaults(run=cmd_report)

    p = sub.add_parser(
        "demo",
        help="Release the labs into a fresh course, autograde the bundled samples, write feedback, grades and the cohort report.",
    )
    p.add_argument("--work", type=Path, default=Path("build/demo-course"), help="Where to build the course (replaced).")
    p.set_defaults(run=cmd_demo)

    p = sub.add_parser(
        "init",
        help="Copy the lessons and the learner version of every lab and quiz into a folder to work in; a file "
        "already there is kept as it is.",
    )
    p.add_argument("folder", type=Path, help="The working folder (made if missing).")
    p.set_defaults(run=cmd_init)

    p = sub.add_parser(
        "start",
        help="Open JupyterLab on the course in a working folder, setting the folder up first (as init does) if needed.",
    )
    p.add_argument(
        "folder", type=Path, nargs="?", default=Path("mcp-course"), help="The working folder (default ./mcp-course)."
    )
    p.add_argument(
        "jupyter_args",
        nargs=argparse.REMAINDER,
        help="After --: arguments for `jupyter lab` (default: open lesson 01).",
    )
    p.set_defaults(run=cmd_start)

    for name, command in sub.choices.items():
        command.formatter_class = argparse.RawDescriptionHelpFormatter
        command.epilog = "example:\n  " + EXAMPLES[name].format(prog=prog)
    return parser


# Ctrl-C: what the command says, and its exit status (a shell's for a command ended by SIGINT).
INTERRUPTED = "interrupted (Ctrl-C) before it finished; run it again."
AUTOGRADE_INTERRUPTED = (
    "autograde was interrupted (Ctrl-C). Every submission recorded before the stop is in the gradebook; run the same "
    "command again to grade the rest (what was recorded is not graded again)."
)
INTERRUPTED_EXIT = 130


def main(argv: Sequence[str] | None = None, prog: str = "python -m grader") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, PipelineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a second Ctrl-C ends the command at once
        print(f"stopped: {getattr(args, 'interrupted', INTERRUPTED)}", file=sys.stderr)
        return INTERRUPTED_EXIT


def console() -> int:
    """The ``mcp-course`` command: the same subcommands as ``python -m grader``."""
    return exiting(main(prog="mcp-course"))


def exiting(code: int) -> int:
    """The command's last step before the process ends: everything it made is freed with the process, so Python's
    cycle collector need not walk it all once more as the interpreter shuts down (about half a second of CPU for the
    grader's imports alone). Exit handlers, file flushes and module clean-up still run."""
    gc.freeze()
    return code
