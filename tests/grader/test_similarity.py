"""Answers that look alike: the disguises a copy may wear are undone, and the code every learner was given is no evidence."""

from __future__ import annotations

import math
import random
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader import similarity
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS
from grader.similarity import (
    COMMON_MIN_ANSWERS,
    IDENTICAL,
    NEAR_IDENTICAL,
    SIMILARITY_THRESHOLD,
    Group,
    alike_in_course,
    alike_in_lab,
    normalised,
)

LAB = "lab1_error_results"

STUB = """
def classify(result):
    # YOUR CODE HERE
    raise NotImplementedError()


def summarise(results, limit=10):
    # YOUR CODE HERE
    raise NotImplementedError()
"""

ANSWER = """
def classify(result):
    content = result.get("structuredContent") or {}
    category = content.get("errorCategory", "unknown")
    if not result.get("isError"):
        return {"kind": "success", "retry": False}
    if category == "transient":
        return {"kind": "transient", "retry": content.get("isRetryable", True), "wait": content.get("retryAfterSeconds", 1)}
    if category in ("validation", "business", "permission"):
        return {"kind": category, "retry": False, "tell": content.get("customerMessage", "")}
    return {"kind": "unknown", "retry": False}


def summarise(results, limit=10):
    counts = {}
    for result in results[:limit]:
        verdict = classify(result)
        counts[verdict["kind"]] = counts.get(verdict["kind"], 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{kind}: {n}" for kind, n in ordered)
"""

# The same answer, disguised.
COMMENTED = ANSWER.replace(
    "    counts = {}\n", "    # count each kind of verdict\n    counts = {}  # kind -> how many\n\n\n"
).replace(
    "def summarise(results, limit=10):\n",
    'def summarise(results, limit=10):\n    """How many results of each kind, commonest first."""\n',
)
REFORMATTED = (
    re.sub(r"(?m)^((?:    )+)", lambda m: "  " * (len(m[1]) // 4), ANSWER)
    .replace('{"kind": "success", "retry": False}', '{\n        "kind": "success",\n        "retry": False,\n    }')
    .replace("\n\n\ndef", "\n\n\n\n\ndef")
)
REQUOTED = ANSWER.replace('"', "'")
RENAMED = (
    ANSWER.replace("content", "sc")
    .replace("category", "cat")
    .replace("counts", "tally")
    .replace("verdict", "v")
    .replace("ordered", "ranked")
    .replace("summarise", "summary_of")
)
DISGUISES = {"comments": COMMENTED, "reformatted": REFORMATTED, "quotes": REQUOTED, "renamed": RENAMED}

# Another learner's answer to the same stub, written independently.
UNRELATED = """
def classify(result):
    if result.get("isError") is not True:
        return {"kind": "success", "retry": False}
    sc = result.get("structuredContent", {})
    kind = sc.get("errorCategory")
    known = {"transient": True, "validation": False, "business": False, "permission": False}
    if kind not in known:
        return {"kind": "unknown", "retry": False}
    out = {"kind": kind, "retry": known[kind] and bool(sc.get("isRetryable"))}
    if kind == "transient":
        out["wait"] = float(sc.get("retryAfterSeconds") or 1)
    return out


def summarise(results, limit=10):
    from collections import Counter

    tally = Counter(classify(r)["kind"] for r in list(results)[:limit])
    return ", ".join("%s: %d" % pair for pair in tally.most_common())
"""


def groups_of(answers: dict[str, str], released=(STUB,), **options) -> list[Group]:
    return alike_in_lab(LAB, answers, list(released), **options)


# --- what counts as the same answer -----------------------------------------------------------


def test_two_identical_answers_are_one_identical_group():
    assert groups_of({"ann": ANSWER, "bob": ANSWER}) == [Group(LAB, ("ann", "bob"), IDENTICAL, 1.0)]


@pytest.mark.parametrize("disguise", sorted(DISGUISES))
def test_a_disguised_copy_is_identical_once_normalised(disguise):
    copy = DISGUISES[disguise]
    assert copy != ANSWER
    assert groups_of({"ann": ANSWER, "bob": copy}) == [Group(LAB, ("ann", "bob"), IDENTICAL, 1.0)]


def test_every_disguise_at_once_is_still_the_same_answer():
    all_at_once = re.sub(r"(?m)^((?:    )+)", lambda m: "\t" * (len(m[1]) // 4), RENAMED.replace('"', "'")).replace(
        "\n\n\n", "\n\n\n# helper below\n\n"
    )
    assert normalised(all_at_once) == normalised(ANSWER)


TAKEN = set(re.findall(r"\w+", ANSWER)) | similarity.KEPT_NAMES  # a new name must not be one the answer already uses
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: n not in TAKEN)


@settings(max_examples=60, deadline=None)
@given(st.lists(NAMES, min_size=8, max_size=8, unique=True), st.sampled_from(["'", '"']), st.integers(1, 8))
def test_any_consistent_renaming_quote_style_and_indent_width_reads_the_same(new_names, quote, width):
    """The class of disguises, not one example: whatever the new names (none a keyword or builtin), the quotes
    and the indentation width, the normalised tokens do not change."""
    own = ["content", "category", "counts", "verdict", "ordered", "limit", "results", "summarise"]
    renamed = ANSWER
    for old, new in zip(own, new_names, strict=True):
        renamed = re.sub(rf"(?<![\w.]){old}\b", f"__{new}__", renamed)
    renamed = re.sub(r"__(\w+?)__", r"\1", renamed).replace('"', quote)
    renamed = re.sub(r"(?m)^((?:    )+)", lambda m: " " * width * (len(m[1]) // 4), renamed)
    assert normalised(renamed) == normalised(ANSWER)


def test_an_f_string_is_one_token_of_its_text_on_every_interpreter():
    """Python 3.12 tokenises an f-string in parts, Python 3.11 as one string: the normalised tokens, and so the
    fingerprints and every similarity, are the same whichever interpreter grades."""
    code = "def show(item, width):\n    return f'{item!r:>{width}} {f\"in {item}\"}' + F'''{{x}}\n{width}'''\n"
    assert normalised(code) == [
        "def",
        "V1",
        "(",
        "V2",
        ",",
        "V3",
        ")",
        ":",
        ";",
        "{",
        "return",
        'f"{item!r:>{width}} {f"in {item}"}"',
        "+",
        'f"{{x}}\n{width}"',
        ";",
        "}",
    ]


def test_what_changes_the_meaning_is_not_normalised_away():
    """Attributes, keywords, builtins, numbers and the text of strings stay as they are."""
    for changed in (
        ANSWER.replace('content.get("isRetryable", True)', 'content.pop("isRetryable", True)'),  # an attribute
        ANSWER.replace("if not result", "if result"),  # a keyword
        ANSWER.replace("sorted(", "reversed("),  # a builtin
        ANSWER.replace('counts.get(verdict["kind"], 0) + 1', 'counts.get(verdict["kind"], 0) + 2'),  # a number
        ANSWER.replace('"transient"', '"transient "'),  # a string's text
    ):
        assert changed != ANSWER
        assert normalised(changed) != normalised(ANSWER)


def test_a_copy_with_a_few_lines_changed_is_near_identical():
    edited = ANSWER.replace(
        'return {"kind": "unknown", "retry": False}', 'return {"kind": "unknown", "retry": True, "why": "?"}'
    )
    (group,) = groups_of({"ann": ANSWER, "bob": edited})
    assert (group.students, group.kind) == (("ann", "bob"), NEAR_IDENTICAL)
    assert SIMILARITY_THRESHOLD <= group.similarity < 1
    assert group.similarity == similarity.similarity(ANSWER, edited, [STUB])


def test_an_answer_written_independently_is_not_flagged():
    assert similarity.similarity(ANSWER, UNRELATED, [STUB]) < 0.3
    assert groups_of({"ann": ANSWER, "cem": UNRELATED}) == []
    # with a copy beside them, only the copy joins ann
    assert groups_of({"ann": ANSWER, "bob": RENAMED, "cem": UNRELATED}) == [Group(LAB, ("ann", "bob"), IDENTICAL, 1.0)]


def test_copies_of_copies_make_one_group_with_the_lowest_link():
    first = ANSWER.replace('"tell": content.get("customerMessage", "")', '"tell": ""')
    second = first.replace('return {"kind": "unknown", "retry": False}', 'return {"kind": "unknown", "retry": None}')
    (group,) = groups_of({"ann": ANSWER, "bob": first, "dan": second, "eve": second, "cem": UNRELATED})
    assert (group.students, group.kind) == (("ann", "bob", "dan", "eve"), NEAR_IDENTICAL)
    links = [similarity.similarity(a, b, [STUB]) for a, b in ((ANSWER, first), (first, second), (ANSWER, second))]
    assert group.similarity == min(v for v in links if v >= SIMILARITY_THRESHOLD)


# --- the code everyone was given ---------------------------------------------------------------


# A stub as long as a real lab's: signatures with defaults, and nbgrader's placeholder body.
LONG_STUB = "\n\n".join(
    f"def {name}(message, code={code!r}, retryable={retryable}, **fields):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    for name, code, retryable in [
        ("transient_error", "UPSTREAM_UNAVAILABLE", True),
        ("validation_error", "INVALID_ARGUMENT", False),
        ("business_error", "POLICY", False),
        ("permission_error", "PERMISSION_DENIED", False),
        ("not_found_error", "NOT_FOUND", False),
        ("empty_result", "", False),
    ]
)


def test_two_students_who_left_the_stub_as_it_was_are_not_flagged():
    assert groups_of({"ann": LONG_STUB, "bob": LONG_STUB}, released=[LONG_STUB]) == []
    assert groups_of({"ann": LONG_STUB, "bob": LONG_STUB}, released=()) != []  # the released code is what clears them


def test_two_students_who_barely_changed_the_stub_are_not_flagged():
    barely = LONG_STUB.replace(
        "    # YOUR CODE HERE\n    raise NotImplementedError()", "    return {'isError': True}", 1
    )
    other = LONG_STUB.replace(
        "    # YOUR CODE HERE\n    raise NotImplementedError()", "    return {'isError': True, 'content': []}", 2
    )
    assert groups_of({"ann": barely, "bob": barely + "\n# TODO\n", "cem": other}, released=[LONG_STUB]) == []
    assert groups_of({"ann": barely, "bob": barely}, released=()) != []


STARTING = (
    ANSWER
    + """

def render(results):
    lines = []
    for result in results:
        verdict = classify(result)
        lines.append(f"{verdict['kind']:<12} retry={verdict['retry']}")
    return "\\n".join(lines)
"""
)


def test_in_a_fix_it_lab_the_starting_code_is_no_evidence_only_the_fixes_are():
    """Two learners fix different flaws of the same given code: nearly all their code is alike, none of it theirs."""
    ann = STARTING.replace(
        'return {"kind": "unknown", "retry": False}', 'return {"kind": "unknown", "retry": False, "escalate": True}'
    )
    bob = STARTING.replace("for result in results[:limit]:", "for result in results[:max(0, limit)]:")
    assert similarity.similarity(ann, bob, released=()) >= SIMILARITY_THRESHOLD
    assert groups_of({"ann": ann, "bob": bob}, released=[STARTING]) == []
    # The same substantial new code on top of the starting code is flagged.
    extra = UNRELATED.replace("def classify", "def classify_again").replace("def summarise", "def summarise_again")
    assert groups_of({"ann": STARTING + extra, "bob": STARTING + extra}, released=[STARTING]) == [
        Group(LAB, ("ann", "bob"), IDENTICAL, 1.0)
    ]


def test_code_most_of_a_large_cohort_shares_is_common_ground_not_evidence():
    rng = random.Random(7)
    helper = ANSWER  # a passage from the lessons every learner pasted in
    answers = {f"s{i:02d}": helper + random_program(rng, 1) for i in range(COMMON_MIN_ANSWERS + 5)}
    assert groups_of(answers, threshold=0.5) == []
    small = dict(list(answers.items())[:3])  # too few answers to tell what is common: the helper makes them alike
    assert groups_of(small, threshold=0.5) != []


def test_the_threshold_is_inclusive_and_an_option():
    edited = ANSWER.replace('"tell": content.get("customerMessage", "")', '"tell": content.get("message")')
    value = similarity.similarity(ANSWER, edited, [STUB])
    assert 0 < value < 1
    assert groups_of({"ann": ANSWER, "bob": edited}, threshold=value) == [
        Group(LAB, ("ann", "bob"), NEAR_IDENTICAL, value)
    ]
    assert groups_of({"ann": ANSWER, "bob": edited}, threshold=math.nextafter(value, 1)) == []
    with pytest.raises(ValueError, match="above 0 and at most 1"):
        groups_of({"ann": ANSWER}, threshold=0)


def test_code_python_cannot_read_is_compared_too():
    broken = (
        ANSWER.replace("def summarise(results, limit=10):", "def summarise(results, limit=10:") + '\nx = "unclosed\n'
    )
    assert groups_of({"ann": broken, "bob": broken.replace("counts", "c")}) == [
        Group(LAB, ("ann", "bob"), IDENTICAL, 1.0)
    ]
    assert groups_of({"ann": broken, "cem": UNRELATED}) == []


# --- many answers ------------------------------------------------------------------------------


def random_program(rng: random.Random, functions: int) -> str:
    """A program of its own: functions of random shapes, numbers and strings."""
    out = []
    for f in range(functions):
        body = []
        for _ in range(rng.randint(3, 6)):
            shape = rng.randrange(4)
            if shape == 0:
                body.append(f"    x = y * {rng.randrange(10**6)} + len('{rng.randrange(10**6)}')")
            elif shape == 1:
                body.append(f"    if y > {rng.randrange(1000)}:\n        return '{rng.randrange(10**6)}'")
            elif shape == 2:
                body.append(f"    for i in range({rng.randrange(100)}):\n        y = y - i % {rng.randrange(1, 99)}")
            else:
                body.append(f"    y = max(y, {rng.randrange(10**4)}, abs(y - {rng.randrange(10**4)}))")
        out.append(f"def f{f}(y):\n" + "\n".join(body) + "\n    return y\n")
    return "\n\n".join(out)


def test_a_large_cohort_compares_only_the_pairs_that_share_a_rare_passage(monkeypatch):
    rng = random.Random(3)
    answers = {f"s{i:03d}": random_program(rng, 8) for i in range(300)}
    answers["zed"] = answers["s042"].replace("y", "value")
    answers["amy"] = answers["s117"] + "\n\ndef extra(y):\n    return y + 1\n"
    compared = []
    jaccard = similarity.jaccard
    monkeypatch.setattr(similarity, "jaccard", lambda a, b: compared.append(1) or jaccard(a, b))
    groups = groups_of(answers, released=())
    assert [(g.students, g.kind) for g in groups] == [(("s042", "zed"), IDENTICAL), (("amy", "s117"), NEAR_IDENTICAL)]
    pairs = len(answers) * (len(answers) - 1) // 2
    assert len(compared) < pairs / 100  # not the 45,000 pairs


# --- in a course -------------------------------------------------------------------------------


class GradedCourse:
    """What alike_in_course reads of a course: its folder and its gradebook's rows."""

    def __init__(self, root: Path, graded: list[tuple[str, str]]):
        self.root = root
        self.graded = graded

    def gradebook(self) -> list[dict]:
        return [{"student": s, "lab": lab, "score": 0.0, "max_score": 1.0} for s, lab in self.graded]


def submit(root: Path, student: str, sample: str, lab: str = LAB) -> Path:
    target = root / "submitted" / student / lab / f"{lab}.ipynb"
    target.parent.mkdir(parents=True)
    shutil.copy(SAMPLE_SUBMISSIONS / sample / lab / f"{lab}.ipynb", target)
    return target


def test_a_course_compares_its_graded_submissions_against_the_released_notebook(tmp_path):
    release = tmp_path / "release" / LAB / f"{LAB}.ipynb"
    release.parent.mkdir(parents=True)
    shutil.copy(SAMPLE_SUBMISSIONS / "blank" / LAB / f"{LAB}.ipynb", release)  # the sample "blank" is the release
    submit(tmp_path, "ann", "solution")
    submit(tmp_path, "bob", "retries_business_error")  # the solution with one line changed
    submit(tmp_path, "cem", "blank")
    submit(tmp_path, "dan", "blank")
    submit(tmp_path, "eve", "solution")  # submitted, but not graded: not in the gradebook
    submit(tmp_path, "fay", "solution").write_text("{ not a notebook")
    graded = [(s, LAB) for s in ("ann", "bob", "cem", "dan", "fay")]
    (group,) = alike_in_course(GradedCourse(tmp_path, graded))
    assert (group.lab, group.students, group.kind) == (LAB, ("ann", "bob"), NEAR_IDENTICAL)
    # Without the released notebook the two untouched stubs would be an identical pair.
    release.unlink()
    assert Group(LAB, ("cem", "dan"), IDENTICAL, 1.0) in alike_in_course(GradedCourse(tmp_path, graded))


def test_a_fix_it_labs_starting_code_is_no_evidence_even_without_a_release_folder(tmp_path):
    lab = "lab4_server_integration"
    shutil.copytree(DEFAULT_COURSE / "source" / lab, tmp_path / "source" / lab)
    submit(tmp_path, "ann", "blank", lab)  # the starting code as handed out
    submit(tmp_path, "bob", "blank", lab)
    pairs = [("ann", lab), ("bob", lab)]
    # No release folder: the source notebook's starting code still says what everyone was given.
    assert alike_in_course(GradedCourse(tmp_path, pairs)) == []
    shutil.rmtree(tmp_path / "source")
    assert alike_in_course(GradedCourse(tmp_path, pairs)) == [Group(lab, ("ann", "bob"), IDENTICAL, 1.0)]
