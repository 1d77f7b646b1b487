"""Answers that look alike: students whose answer code for one lab is the same, or nearly, once disguises are undone.

A prompt for the instructor to look, never a verdict. Each answer is first normalised, so that the
trivial disguises of a copy do not hide it: comments, docstrings, blank lines, line breaks inside
brackets, indentation width, trailing commas, the quotes around a string and the names of the
learner's own variables and functions (every name that is not a keyword, a builtin or an attribute)
all read the same. Answers whose normalised code is the same are *identical*; answers whose
fingerprints (hashes of every ``KGRAM`` tokens in a row, winnowed) overlap by at least the threshold
(Jaccard, ``SIMILARITY_THRESHOLD``) are *near-identical*.

Code every learner starts from is not evidence. Each passage of the code released to everyone (the
released notebook's answer cells: nbgrader's stubs, and a fix-it lab's starting code) is taken out of
every answer before answers are compared, and an answer with fewer than ``MIN_OWN_FINGERPRINTS`` of
its own left (the stub left as it was, or barely changed) is compared with no one. In a lab with at
least ``COMMON_MIN_ANSWERS`` different answers, so is a passage that more than ``COMMON_SHARE`` of them
hold: it is the lab's common ground (an idiom of the lessons), not a sign of copying.

Cost, for the n answers of a lab of about L tokens each: normalising and fingerprinting is O(n·L);
identical answers are bucketed by the hash of their normalised code, O(n); near-identical ones come
from prefix filtering (each answer is indexed under its few rarest fingerprints, the ones that any
answer alike at the threshold must share with it), so only answers sharing a rare passage are
compared, each pair in O(L), and no pair that reaches the threshold is missed; the O(n²) pairwise
comparison is never made. Measured: 2,000 answers of lab 1's size (about 2,000 tokens each, all
variants of one solution) take about 15 seconds on one core, most of it Python's tokenizer, and
under 100 MB.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import io
import keyword
import math
import re
import tokenize
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from grader.notebook import NotANotebook, answer_code, is_answer_cell, read_notebook, starting_code

SIMILARITY_THRESHOLD = 0.8  # Jaccard of two answers' own fingerprints at or above which they are near-identical
KGRAM = 8  # tokens per fingerprinted passage
WINDOW = 6  # winnowing window: any passage shared over KGRAM + WINDOW - 1 tokens yields a shared fingerprint
MIN_OWN_FINGERPRINTS = 12  # fewer fingerprints of its own than this, and an answer is the released code barely changed
COMMON_SHARE = 0.25  # a passage more than this share of a lab's different answers hold is common ground
COMMON_MIN_ANSWERS = 20  # ... in a lab with at least this many different answers

IDENTICAL = "identical"
NEAR_IDENTICAL = "near-identical"

KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
NAME = "V"  # every learner's own name, in the fingerprinted tokens
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
STATEMENT_START = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, None}
CLOSING = {")", "]", "}"}
# Python 3.12 and later: an f-string's first and last tokens (Python 3.11 has neither, and never yields -1).
FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
STRING_PARTS = re.compile(r"(?is)^([a-z]*)('''|\"\"\"|'|\")(.*)\2$")
ROUGH_TOKENS = re.compile(r"""#[^\n]*|\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"[^"\n]*"|'[^'\n]*'|\w+|[^\s\w]""")


@dataclass(frozen=True)
class Group:
    """Students of one lab whose answers look alike; ``similarity``: 1.0 when identical, else the lowest of
    the similarities that link them."""

    lab: str
    students: tuple[str, ...]
    kind: str  # IDENTICAL or NEAR_IDENTICAL
    similarity: float


# --- normalising ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)  # the same strings come back in answer after answer
def _string(text: str) -> str:
    """A string literal in one canonical spelling, whatever its quotes."""
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError, MemoryError, RecursionError):  # an f-string: its text, in double quotes
        match = STRING_PARTS.match(text)
        return f'{match[1].lower()}"{match[3]}"' if match else text


def _whole_fstrings(tokens: Iterable[tokenize.TokenInfo], code: str) -> Iterable[tokenize.TokenInfo]:
    """The tokens with each f-string as one STRING token of its source text. Python 3.12 and later tokenise an
    f-string in parts (PEP 701: its start, its text, the fields' own tokens, its end), Python 3.11 as one string:
    put together again, an answer normalises to the same tokens, and so the same fingerprints, on either."""
    lines = io.StringIO(code).readlines()
    depth, start = 0, (0, 0)
    for token in tokens:
        if token.type == FSTRING_START:
            depth, start = depth + 1, start if depth else token.start
        elif depth and token.type == FSTRING_END:
            depth -= 1
            if not depth:
                (first, column), (last, end) = start, token.end
                text = "".join(lines[first - 1 : last])[column : len("".join(lines[first - 1 : last - 1])) + end]
                yield tokenize.TokenInfo(tokenize.STRING, text, start, token.end, token.line)
        elif not depth:
            yield token


def _python_tokens(code: str) -> list[tuple[int, str]]:
    """(type, text) of the code's tokens that carry meaning (no comments, no blank lines, no docstrings)."""
    tokens = _whole_fstrings(tokenize.generate_tokens(io.StringIO(code).readline), code)
    raw = [(t.type, t.string) for t in tokens if t.type not in SKIPPED]
    kept: list[tuple[int, str]] = []
    for i, (kind, text) in enumerate(raw):
        before = kept[-1][0] if kept else None
        after = raw[i + 1][0] if i + 1 < len(raw) else tokenize.NEWLINE
        if kind == tokenize.STRING and before in STATEMENT_START and after == tokenize.NEWLINE:
            continue  # a docstring, or a string standing alone as a statement: a comment by another name
        if kind == tokenize.NEWLINE and (before in STATEMENT_START):
            continue  # the end of a statement that was dropped
        if kind == tokenize.OP and text == "," and i + 1 < len(raw) and raw[i + 1][1] in CLOSING:
            continue  # a trailing comma
        kept.append((kind, text))
    return kept


def _rough_tokens(code: str) -> list[tuple[int, str]]:
    """Tokens of code Python cannot tokenise (an unclosed bracket or string): words and marks, comments dropped."""
    out = []
    for text in ROUGH_TOKENS.findall(code):
        if text.startswith("#"):
            continue
        if text[0] in "'\"":
            out.append((tokenize.STRING, text))
        elif text[0].isalpha() or text[0] == "_":
            out.append((tokenize.NAME, text))
        else:
            out.append((tokenize.OP, text))
    return out


def normalised(code: str) -> list[str]:
    """The code as a list of tokens with its disguises undone; the learner's own names become ``V1``, ``V2``, ...
    in order of first appearance (a consistent renaming gives the same list)."""
    try:
        toks = _python_tokens(code)
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        toks = _rough_tokens(code)
    names: dict[str, str] = {}
    out = []
    previous = ""
    for kind, text in toks:
        if kind == tokenize.NAME and text not in KEPT_NAMES and previous != ".":
            out.append(names.setdefault(text, f"{NAME}{len(names) + 1}"))
        elif kind == tokenize.STRING:
            out.append(_string(text))
        elif kind == tokenize.NEWLINE:
            out.append(";")
        elif kind == tokenize.INDENT:
            out.append("{")
        elif kind == tokenize.DEDENT:
            out.append("}")
        else:
            out.append(text)
        previous = text if kind == tokenize.OP else ""
    return out


def _anonymous(tokens: list[str]) -> list[str]:
    """Every own name as the same ``V``: a name added or dropped does not shift the others' numbers."""
    return [NAME if t[:1] == NAME and t[1:].isdigit() else t for t in tokens]


def stable_hash(tokens: Iterable[str]) -> int:
    """A hash of a run of tokens that is the same in every process (Python's own ``hash`` of text is salted per
    process, which would make which fingerprints winnowing keeps, and so every similarity, vary run to run)."""
    return int.from_bytes(
        hashlib.blake2b("\x1f".join(tokens).encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big"
    )


def kgram_hashes(tokens: list[str]) -> list[int]:
    """The hash of every KGRAM tokens in a row (one hash for code shorter than that)."""
    anonymous = _anonymous(tokens)
    if len(anonymous) <= KGRAM:
        return [stable_hash(anonymous)] if anonymous else []
    return [stable_hash(anonymous[i : i + KGRAM]) for i in range(len(anonymous) - KGRAM + 1)]


def winnowed(hashes: list[int]) -> set[int]:
    """The fingerprints winnowing keeps: the smallest hash of each window of WINDOW hashes."""
    if len(hashes) <= WINDOW:
        return set(hashes)
    return {min(hashes[i : i + WINDOW]) for i in range(len(hashes) - WINDOW + 1)}


# --- comparing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One answer as it is compared: the hash of its normalised code, and its own fingerprints."""

    key: int
    own: frozenset[int]


def answer(code: str, released: frozenset[int] = frozenset()) -> Answer:
    """``code`` fingerprinted, without what it shares with the released code (``released``: its k-gram hashes)."""
    tokens = normalised(code)
    return Answer(stable_hash(tokens), frozenset(winnowed(kgram_hashes(tokens)) - released))


def released_hashes(released_code: Iterable[str]) -> frozenset[int]:
    """Every k-gram hash of the code released to everyone."""
    return frozenset(h for code in released_code for h in kgram_hashes(normalised(code)))


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def similarity(a: str, b: str, released: Iterable[str] = ()) -> float:
    """How alike two answers are, 0 to 1, once both are normalised and the released code is taken out of each."""
    known = released_hashes(released)
    return jaccard(answer(a, known).own, answer(b, known).own)


def _near_pairs(owns: list[frozenset[int]], threshold: float) -> dict[tuple[int, int], float]:
    """(i, j) -> similarity of every pair of sets at or above the threshold, by prefix filtering: under one order of
    fingerprints (rarest first), two sets alike at ``threshold`` share one of the first ``|A| - ceil(t·|A|) + 1``."""
    frequency = Counter(f for own in owns for f in own)
    index: dict[int, list[int]] = defaultdict(list)
    pairs: dict[tuple[int, int], float] = {}
    for i, own in enumerate(owns):
        ordered = sorted(own, key=lambda f: (frequency[f], f))
        prefix = ordered[: len(ordered) - math.ceil(threshold * len(ordered) - 1e-9) + 1]
        candidates = {j for f in prefix for j in index[f]}
        for j in candidates:
            value = jaccard(owns[j], own)
            if value >= threshold:
                pairs[j, i] = value
        for f in prefix:
            index[f].append(i)
    return pairs


def alike_in_lab(
    lab: str,
    answers: Mapping[str, str],
    released: Iterable[str] = (),
    threshold: float = SIMILARITY_THRESHOLD,
) -> list[Group]:
    """The groups of students (``answers``: student -> answer code) whose answers look alike, most alike first.

    ``released``: the code every learner of the lab was given; what an answer shares with it is no evidence.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"A similarity threshold is above 0 and at most 1, not {threshold!r}.")
    known = released_hashes(released)
    by_key: dict[int, list[str]] = defaultdict(list)
    owns: dict[int, frozenset[int]] = {}
    for student, code in answers.items():
        fingerprinted = answer(code, known)
        if len(fingerprinted.own) < MIN_OWN_FINGERPRINTS:
            continue  # the released code, left as it was or barely changed
        by_key[fingerprinted.key].append(student)
        owns[fingerprinted.key] = fingerprinted.own
    keys = sorted(by_key, key=lambda k: min(by_key[k]))
    distinct = [owns[k] for k in keys]
    if len(distinct) >= COMMON_MIN_ANSWERS:
        held = Counter(f for own in distinct for f in own)
        common = {f for f, n in held.items() if n > COMMON_SHARE * len(distinct)}
        distinct = [own - common for own in distinct]
        keep = [i for i, own in enumerate(distinct) if len(own) >= MIN_OWN_FINGERPRINTS]
        keys, distinct = [keys[i] for i in keep], [distinct[i] for i in keep]

    parent = list(range(len(keys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    pairs = _near_pairs(distinct, threshold)
    for i, j in pairs:
        parent[root(j)] = root(i)
    lowest: dict[int, float] = {}
    for (i, _), value in pairs.items():
        lowest[root(i)] = min(value, lowest.get(root(i), 1.0))

    members: dict[int, list[int]] = defaultdict(list)
    for i in range(len(keys)):
        members[root(i)].append(i)
    groups = []
    for head, indices in members.items():
        students = tuple(sorted(s for i in indices for s in by_key[keys[i]]))
        if len(indices) > 1:
            groups.append(Group(lab, students, NEAR_IDENTICAL, lowest[head]))
        elif len(students) > 1:
            groups.append(Group(lab, students, IDENTICAL, 1.0))
    return sorted(groups, key=lambda g: (g.lab, -g.similarity, g.students))


# --- in a course ----------------------------------------------------------------------------


def _readable(path: Path):
    """The notebook at ``path``, or None when there is none or it cannot be read."""
    try:
        return read_notebook(path)
    except NotANotebook:
        return None


def _answer_code(nb) -> str | None:
    """The notebook's answer code, or None when its cells cannot be read as a lab's."""
    try:
        return answer_code(nb)
    except Exception:  # noqa: BLE001 - cells whose shape nbformat let through: left out of the comparison
        return None


def released_code(course_root: Path, lab: str) -> list[str]:
    """What every learner of the lab was given: the released notebook's answer cells, and the source's starting
    code (a fix-it lab's), as far as they can be read."""
    code = []
    release = _readable(course_root / "release" / lab / f"{lab}.ipynb")
    if release is not None and (released := _answer_code(release)) is not None:
        code.append(released)
    source = _readable(course_root / "source" / lab / f"{lab}.ipynb")
    if source is not None:
        code += [given for cell in source.cells if is_answer_cell(cell) and (given := starting_code(cell))]
    return code


def submitted_answers(course_root: Path, pairs: Iterable[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """lab -> student -> answer code of the submitted notebooks of these (student, lab) pairs; a notebook that
    cannot be read is left out."""
    answers: dict[str, dict[str, str]] = defaultdict(dict)
    for student, lab in pairs:
        nb = _readable(course_root / "submitted" / student / lab / f"{lab}.ipynb")
        code = _answer_code(nb) if nb is not None else None
        if code is not None:
            answers[lab][student] = code
    return answers


def alike_in_course(course, threshold: float = SIMILARITY_THRESHOLD) -> list[Group]:
    """The groups of every lab of a ``grader.pipeline.Course``, among its graded submissions."""
    graded = [(row["student"], row["lab"]) for row in course.gradebook()]
    groups = []
    for lab, answers in sorted(submitted_answers(course.root, graded).items()):
        groups += alike_in_lab(lab, answers, released_code(course.root, lab), threshold)
    return groups
