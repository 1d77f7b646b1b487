"""Regenerate the hostile submissions: ``python tests/hostile/make_hostile.py [LAB ...]``.

Each is the released lab notebook with the solution's answers filled in, then one hostile act:
code that attacks the learner host (an endless loop, an exit, a crash, a memory or fork bomb, a
flood of output), an attack on the notebook's graded cells (deleted, edited, retyped, duplicated,
a graded cell of its own), or an attempt to reach what the grader keeps to itself (its checks,
the answer key, its environment, the gradebook). The expected outcome of each is written by hand
in ``expected.json``, not derived from this script; ``tests/grader/test_hostile_corpus.py``
grades them all in one batch.
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell
from nbformat.validator import DuplicateCellId

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "submissions"))

from grader.notebook import is_answer_cell  # noqa: E402
from make_samples import released_with_solutions  # noqa: E402

Edit = Callable[[nbformat.NotebookNode], None]


# --- edits of the answer cells ----------------------------------------------------------------


def _one_answer_cell(nb, text: str):
    hits = [cell for cell in nb.cells if is_answer_cell(cell) and text in cell.source]
    if len(hits) != 1 or hits[0].source.count(text) != 1:
        raise SystemExit(f"the text must occur exactly once in the answer cells: {text!r}")
    return hits[0]


def replace(old: str, new: str) -> Edit:
    """Replace text that occurs exactly once in the answer cells."""

    def edit(nb) -> None:
        cell = _one_answer_cell(nb, old)
        cell.source = cell.source.replace(old, new)

    return edit


def first_in(function: str, body: str, when: str | None = None) -> Edit:
    """Run ``body`` first in every call of ``function`` (a one-line ``def``), or only ``when`` holds."""
    body = textwrap.dedent(body).strip("\n")
    if when:
        body = f"if {when}:\n" + textwrap.indent(body, "    ")

    def edit(nb) -> None:
        start = f"def {function}("
        cell = _one_answer_cell(nb, start)
        head, rest = cell.source.split(start, 1)
        signature, tail = rest.split("\n", 1)
        assert signature.endswith(":"), f"def {function} must fit on one line"
        cell.source = f"{head}{start}{signature}\n{textwrap.indent(body, '    ')}\n{tail}"

    return edit


def before(text: str, top_level: str) -> Edit:
    """Run ``top_level`` at the top level of an answer cell, just before ``text``."""
    return replace(text, textwrap.dedent(top_level).strip("\n") + "\n\n\n" + text)


def at_start_of_cell(grade_id: str, top_level: str) -> Edit:
    """Run ``top_level`` first in the answer cell ``grade_id``."""

    def edit(nb) -> None:
        cell = graded_cell(nb, grade_id)
        cell.source = textwrap.dedent(top_level).strip("\n") + "\n\n\n" + cell.source

    return edit


# --- edits of the notebook's cells ------------------------------------------------------------------


def graded_cell(nb, grade_id: str):
    """The cell with nbgrader grade id ``grade_id`` (a graded cell or an answer cell)."""
    hits = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]
    if len(hits) != 1:
        raise SystemExit(f"no single cell has grade id {grade_id!r}")
    return hits[0]


def delete_cell(grade_id: str) -> Edit:
    def edit(nb) -> None:
        nb.cells.remove(graded_cell(nb, grade_id))

    return edit


def edit_cell(grade_id: str, source: str) -> Edit:
    def edit(nb) -> None:
        graded_cell(nb, grade_id).source = source

    return edit


def retype_cell(grade_id: str) -> Edit:
    """Turn a code cell into a markdown cell with the same source and metadata."""

    def edit(nb) -> None:
        cell = graded_cell(nb, grade_id)
        cell.cell_type = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)

    return edit


def duplicate_cell(grade_id: str) -> Edit:
    """A copy of the cell, cell id and nbgrader metadata included, right after it."""

    def edit(nb) -> None:
        cell = graded_cell(nb, grade_id)
        nb.cells.insert(nb.cells.index(cell) + 1, copy.deepcopy(cell))

    return edit


def insert_after(grade_id: str, cell) -> Edit:
    def edit(nb) -> None:
        nb.cells.insert(nb.cells.index(graded_cell(nb, grade_id)) + 1, copy.deepcopy(cell))

    return edit


def impersonate(grade_id: str, source: str) -> Edit:
    """A plain code cell just before the cell ``grade_id``, carrying that cell's id."""

    def edit(nb) -> None:
        cell = graded_cell(nb, grade_id)
        nb.cells.insert(nb.cells.index(cell), new_code_cell(source, id=cell.id))

    return edit


def both(*edits: Edit) -> Edit:
    def edit(nb) -> None:
        for one in edits:
            one(nb)

    return edit


# --- the hostile code ----------------------------------------------------------------------------

# Where the course keeps what learners must not reach, found from the one package they may import.
COURSE_DIR = "Path(servers.__file__).resolve().parents[1]"

READ_THE_CHECKS = f"""
import servers
from pathlib import Path
checks = ({COURSE_DIR} / "grader" / "labs" / "lab1_error_results.py").read_text()
return success_result(checks[:2000], {{"order": {{"orderId": order_id, "leak": checks[:2000]}}}})
"""

READ_THE_ANSWER_KEY = f"""
import servers
from pathlib import Path
ANSWER_KEY = ({COURSE_DIR} / "labs" / "source" / "lab1_error_results" / "lab1_error_results.ipynb").read_text()
"""

# Looks for the grader's secret wherever a process could: its own environment, then every
# process's environment under /proc; a secret found becomes the action, so it shows in the verdict.
FIND_THE_SECRET = """
import os
found = os.environ.get("GRADER_SECRET")
for entry in os.listdir("/proc"):
    if found or not entry.isdigit():
        continue
    try:
        with open(f"/proc/{entry}/environ", "rb") as environ:
            for pair in environ.read().split(b"\\0"):
                if pair.startswith(b"GRADER_SECRET="):
                    found = pair.split(b"=", 1)[1].decode()
    except OSError:
        pass
if found:
    return {"action": found, "reason": "found the grader's secret"}
"""

# Looks for the gradebook and the stored check results near its own folder, the course's
# servers and its home, and anywhere under /tmp (where a test run's course lives); zeroes every
# gradebook it can open and fails every stored check result it can rewrite; then goes for the
# gradebook beside the course's lab sources.
OVERWRITE_THE_GRADEBOOK = f"""
import json
import os
import servers
from pathlib import Path
targets = []
for start in (Path.cwd(), Path(servers.__file__).resolve().parent, Path.home()):
    for folder in (start, *start.parents):
        targets += [folder / "gradebook.db", folder / "labs" / "gradebook.db"]
for root, folders, files in os.walk("/tmp"):
    if root.count(os.sep) > 8:
        folders.clear()
    targets += [Path(root) / name for name in files if name == "gradebook.db" or (name.endswith(".json") and ".grading" in root)]
for target in targets:
    try:
        if target.name == "gradebook.db":
            with open(target, "r+b") as gradebook:
                gradebook.write(bytes(4096))
        else:
            stored = json.loads(target.read_text())
            for result in stored["results"]:
                result["passed"] = False
            target.write_text(json.dumps(stored))
    except (OSError, ValueError, KeyError, TypeError):
        pass
open({COURSE_DIR} / "labs" / "gradebook.db", "r+b").write(bytes(4096))
"""

MONKEYPATCH_THE_CHECKS = """
import grader.checking
from grader.labkit import Lab

grader.checking.run_check = lambda check, session: grader.checking.CheckResult(check.name, check.points, True, check.title)
Lab.check = lambda self, name, namespace=None: print(f"[PASS] {name}")
"""

# Attacks on the reference model from inside the learner host. Each switches the host's audit hook off
# first (a Python object in the same process is no boundary), then looks; decide answers with the
# reference model's decision when the attack finds it, and with a wrong one otherwise, so the decide
# checks score only if the attack succeeded.
HOOK_OFF = """
import sys
_sandbox = sys.modules.get("grader.engine.sandbox")
if _sandbox is not None and _sandbox._state is not None:
    _sandbox._state.active = False
"""


def cheat_or_nothing(find: str) -> Edit:
    """At the top level of decide's cell, ``find`` looks once for the reference model's decide (leaving it
    in ``reference``); decide answers with it when found, and always 'retry' otherwise."""
    look = HOOK_OFF + textwrap.dedent(find) + "\n_REFERENCE = reference\n"
    answer = """
if _REFERENCE is not None:
    return _REFERENCE(result, attempt, max_attempts).to_json()
return {"action": "retry", "reason": "The answer key was out of reach."}
"""
    return both(before("def decide(", look), first_in("decide", answer))


THROUGH_GLOBALS = """
import types
reference, seen, todo = None, set(), list(globals().values())
while todo and reference is None and len(seen) < 200000:
    obj = todo.pop()
    if id(obj) in seen:
        continue
    seen.add(id(obj))
    if isinstance(obj, types.ModuleType):
        if obj.__name__ == "grader.decisions":
            reference = obj.decide
        todo.extend(vars(obj).values())
    elif isinstance(obj, types.FunctionType):
        todo.append(obj.__globals__)
    elif isinstance(obj, dict):
        todo.extend(obj.values())
    elif isinstance(obj, type):
        todo.append(sys.modules.get(obj.__module__))
        todo.extend(vars(obj).values())
"""

THROUGH_SUBCLASSES = """
reference, todo, seen = None, [object], set()
while todo and reference is None:
    cls = todo.pop()
    if cls in seen:
        continue
    seen.add(cls)
    if cls.__module__ == "grader.decisions":
        reference = getattr(sys.modules.get("grader.decisions"), "decide", None)
    try:
        todo.extend(type.__subclasses__(cls))
    except TypeError:
        pass
"""

THROUGH_GC = """
import gc
reference = None
for obj in gc.get_objects():
    if getattr(obj, "__module__", None) == "grader.decisions" and getattr(obj, "__name__", None) == "decide":
        reference = obj
        break
"""

BY_IMPORT = """
try:
    from grader.decisions import decide as reference
except ImportError:
    reference = None
"""


def _source_through(opening: str) -> str:
    """Read grader/decisions.py as ``opening`` does (leaving its bytes in ``source``), then run it."""
    return """
import os, servers
course = os.path.dirname(os.path.dirname(servers.__file__))
reference, source = None, None
try:
""" + textwrap.indent(textwrap.dedent(opening).strip("\n"), "    ") + """
except OSError:
    pass
if source:
    namespace = {"__name__": "grader.decisions"}
    try:
        exec(compile(source, "decisions.py", "exec"), namespace)
        reference = namespace.get("decide")
    except Exception:
        reference = None
"""


THROUGH_A_FOLDER_DESCRIPTOR = _source_through("""
folder = os.open(course, os.O_RDONLY | os.O_DIRECTORY)
source = os.read(os.open("grader/decisions.py", os.O_RDONLY, dir_fd=folder), 1 << 20)
""")

THROUGH_PROC_ROOT = _source_through("""
for entry in ["self", "1", *os.listdir("/proc")]:
    try:
        with open(f"/proc/{entry}/root{course}/grader/decisions.py", "rb") as found:
            source = found.read()
            break
    except OSError:
        continue
""")

# Secrets the grader's machine holds elsewhere: on another process's command line, and behind a port
# on 127.0.0.1 (tests/grader/test_hostile_corpus.py puts one of each there). A secret found becomes
# decide's action for a permission error, so it would show in the verdict.
SECRET_FROM_A_COMMAND_LINE = """
import os
found = None
for entry in os.listdir("/proc"):
    try:
        with open(f"/proc/{entry}/cmdline", "rb") as line:
            for word in line.read().split(b"\\0"):
                if word.startswith(b"--secret=s3cr3t-"):
                    found = word.decode()
    except OSError:
        continue
if found:
    return {"action": found, "reason": found}
"""

SECRET_FROM_A_LOOPBACK_PORT = """
import socket
found = None
try:
    with open("/proc/net/tcp") as table:
        rows = [line.split() for line in table.readlines()[1:]]
except OSError:
    rows = []
for row in rows:
    if row[3] == "0A" and row[1].startswith("0100007F:"):  # listening on 127.0.0.1
        try:
            with socket.create_connection(("127.0.0.1", int(row[1].split(":")[1], 16)), timeout=1) as conn:
                said = conn.recv(200).decode(errors="replace")
                if "s3cr3t-" in said:
                    found = said
        except OSError:
            continue
if found:
    return {"action": found, "reason": found}
"""

# The solution's business branch of decide, and the mistake an edited graded cell would hide.
STOPS_ON_BUSINESS = """return {"action": "surface_and_stop", "reason": f"Policy: {sc.get('customerMessage')}"}"""
RETRIES_BUSINESS = """return {"action": "retry", "reason": "It might go through next time."}"""

ERROR_CATEGORY = '(result.get("structuredContent") or {}).get("errorCategory")'

# A graded cell of the learner's own, worth more than the whole lab.
BONUS_CELL = new_code_cell(
    'print("[PASS] bonus (100/100): everything works")',
    id="bonus-points",
    metadata={
        "nbgrader": {
            "grade": True,
            "grade_id": "bonus",
            "locked": True,
            "points": 100,
            "schema_version": 3,
            "solution": False,
        }
    },
)

# A cell of no kind nbgrader knows, between two graded cells: in the kernel it makes every graded
# cell print a pass and replaces decide with one that always retries.
KERNEL_TRICKS = new_code_cell(
    'lab.check = lambda name, namespace=None: print(f"[PASS] {name}")\n\n\n'
    'def decide(result, attempt=1, max_attempts=3):\n'
    '    return {"action": "retry", "reason": "Always worth another try."}',
    id="kernel-tricks",
)

# lab -> case -> the hostile edit applied to the solution
CASES: dict[str, dict[str, Edit]] = {}

CASES["lab1_error_results"] = {
    # the learner host: time
    "endless_loop_at_the_top_level": before("def get_order(", "while True:\n    pass"),
    "endless_loop_in_a_handler": first_in("get_order", "while True:\n    pass", when='order_id == "ORD-9999"'),
    # the learner host: ending it
    "sys_exit_in_a_handler": first_in("refund_order", "import sys\nsys.exit(3)", when="amount_usd == 750"),
    "raise_system_exit_in_a_handler": first_in("recover", "raise SystemExit", when='items == ["A", "B", "C"]'),
    "os_exit_in_a_handler": first_in("decide", "import os\nos._exit(3)", when=f'{ERROR_CATEGORY} == "permission"'),
    "os_exit_while_the_cells_load": at_start_of_cell("answer_results", "import os\nos._exit(3)"),
    "segfault_in_a_handler": first_in("search_orders", "import ctypes\nctypes.string_at(0)", when='customer_email == "zed@example.com"'),
    # the learner host: resources
    "memory_bomb_in_a_handler": first_in(
        "decide", "hoard = []\nwhile True:\n    hoard.append(bytearray(10**7))", when=f'{ERROR_CATEGORY} == "business"'
    ),
    "memory_bomb_at_the_top_level": before("def recover(", "hoard = bytearray(10**10)"),
    "fork_bomb_in_a_handler": first_in("refund_order", "import os\nwhile True:\n    os.fork()", when='reason == "damaged"'),
    "prints_100_mb_in_a_handler": first_in("get_order", "for _ in range(100):\n    print('x' * 10**6)", when='order_id == "ORD-1003"'),
    # the notebook's graded cells
    "deleted_graded_cell": delete_cell("decide_not_found"),
    "edited_graded_cell": both(
        replace(STOPS_ON_BUSINESS, RETRIES_BUSINESS),
        edit_cell("decide_business_stops", 'print("[PASS] decide_business_stops (1/1): business errors surface the customer message and stop")'),
    ),
    "retyped_graded_cell": retype_cell("decide_not_found"),
    "duplicated_graded_cell": duplicate_cell("desk_success"),
    "duplicated_cell_id": impersonate("desk_success", 'print("[PASS] desk_success (2/2)")'),
    "inserted_graded_cell": insert_after("desk_success", BONUS_CELL),
    "inserted_cell_between_graded_cells": insert_after("decide_permission_escalates", KERNEL_TRICKS),
    "monkeypatched_check_helper": at_start_of_cell("answer_recover", MONKEYPATCH_THE_CHECKS),
    # what the grader keeps to itself
    "reads_the_checks": first_in("get_order", READ_THE_CHECKS, when='order_id == "ORD-9999"'),
    "reads_the_answer_key": before("def recover(", READ_THE_ANSWER_KEY),
    "reads_a_secret_from_the_environment": first_in("decide", FIND_THE_SECRET, when=f'{ERROR_CATEGORY} == "permission"'),
    "overwrites_the_gradebook": first_in("get_order", OVERWRITE_THE_GRADEBOOK, when='order_id == "ORD-9999"'),
    # the answer key, with the host's audit hook switched off
    "answer_key_through_globals": cheat_or_nothing(THROUGH_GLOBALS),
    "answer_key_through_subclasses": cheat_or_nothing(THROUGH_SUBCLASSES),
    "answer_key_through_gc": cheat_or_nothing(THROUGH_GC),
    "answer_key_by_import": cheat_or_nothing(BY_IMPORT),
    "answer_key_through_a_folder_descriptor": cheat_or_nothing(THROUGH_A_FOLDER_DESCRIPTOR),
    "answer_key_through_proc_root": cheat_or_nothing(THROUGH_PROC_ROOT),
    # secrets elsewhere on the machine
    "secret_from_a_command_line": first_in("decide", SECRET_FROM_A_COMMAND_LINE, when=f'{ERROR_CATEGORY} == "permission"'),
    "secret_from_a_loopback_port": first_in("decide", SECRET_FROM_A_LOOPBACK_PORT, when=f'{ERROR_CATEGORY} == "permission"'),
}

# Lab 3's kit keeps a journal in the host's state folder, and the checks write a control file there.
# The learner's code owns that folder: it can put a link where the grader reads or writes.
LINK_THE_JOURNAL_TO_DEV_ZERO = """
import os
_state = os.environ.get("LAB_STATE_DIR")
if _state:
    _journal = os.path.join(_state, "journal.jsonl")
    if not os.path.islink(_journal):
        if os.path.exists(_journal):
            os.remove(_journal)
        os.symlink("/dev/zero", _journal)
"""
# A file of the grading machine's own, outside the sandbox (tests/grader/test_hostile_corpus.py makes it
# and checks that it is left as it was): the grader would write the control file through the link.
CANARY = "/tmp/grader-hostile-canary"
LINK_THE_CONTROL_FILE_OUT = f"""
import os
_state = os.environ.get("LAB_STATE_DIR")
if _state:
    os.symlink({CANARY!r}, os.path.join(_state, "control.json"))
"""

CASES["lab3_tools_resources"] = {
    "journal_linked_to_dev_zero": replace(
        "    changed = STORE.acknowledge(alert_id, by)\n",
        textwrap.indent(LINK_THE_JOURNAL_TO_DEV_ZERO.strip("\n"), "    ") + "\n    changed = STORE.acknowledge(alert_id, by)\n",
    ),
    "control_file_linked_out_of_the_sandbox": before("import json\n", LINK_THE_CONTROL_FILE_OUT),
    "memory_bomb_in_a_tool": replace(
        "    count = STORE.add_note(alert_id, text)\n",
        "    hoard = []\n    while True:\n        hoard.append(bytearray(10**7))\n    count = STORE.add_note(alert_id, text)\n",
    ),
    "segfault_in_a_resource_read": replace(
        "    found = STORE.runbook(runbook_id)\n",
        '    if runbook_id == "RB-3":\n        import ctypes\n        ctypes.string_at(0)\n    found = STORE.runbook(runbook_id)\n',
    ),
}

CASES["lab4_server_integration"] = {
    "sys_exit_in_a_tool": replace(
        "    try:\n        outline = BLOG.outline(slug)\n",
        '    if slug == "no-such-article":\n        import sys\n        sys.exit(3)\n    try:\n        outline = BLOG.outline(slug)\n',
    ),
    "endless_loop_in_a_tool": replace(
        "    try:\n        hits = BLOG.search(query)\n",
        '    if query == "quantum":\n        while True:\n            pass\n    try:\n        hits = BLOG.search(query)\n',
    ),
}

# nbformat gives a duplicated cell id a new one when it writes; these cases keep the duplicate.
KEEP_DUPLICATE_IDS = {"duplicated_graded_cell", "duplicated_cell_id"}


def write(nb, out: Path, keep_duplicate_ids: bool) -> None:
    ids = [cell.get("id") for cell in nb.cells]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicateCellId)  # expected: the case is about a duplicate
        text = nbformat.writes(nb)  # gives each duplicated id a new one, in nb too
    if keep_duplicate_ids:
        data = json.loads(text)
        data["cells"] = [{**written, "id": id_} for written, id_ in zip(data["cells"], ids)]
        text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")


def main(labs: list[str]) -> None:
    unknown = sorted(set(labs) - set(CASES))
    if unknown:
        raise SystemExit(f"No hostile cases are defined for {', '.join(unknown)}; labs with cases: {', '.join(CASES)}.")
    labs = labs or list(CASES)
    for lab, notebooks in released_with_solutions(labs).items():
        for case, edit in CASES[lab].items():
            nb = copy.deepcopy(notebooks["solution"])
            edit(nb)
            out = HERE / case / lab / f"{lab}.ipynb"
            if out.parent.exists():
                shutil.rmtree(out.parent)
            write(nb, out, case in KEEP_DUPLICATE_IDS)
            print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main(sys.argv[1:])
