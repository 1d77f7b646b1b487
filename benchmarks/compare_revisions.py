"""Benchmark: this grading engine at two revisions, on the same ordinary submissions, in one run.

    .venv/bin/python benchmarks/compare_revisions.py OLD_TREE [NEW_TREE] [--rounds N] [--jobs N]

OLD_TREE and NEW_TREE are checkouts of the repository (``git worktree add /tmp/old REV``; NEW_TREE
defaults to this one), run with this interpreter. The batch is the non-hostile sample submissions the
two trees share by name (``tests/submissions/<sample>/<lab>``), each graded as a student of its own:
ordinary submissions, since a hostile one mostly measures a timeout. Each round releases every lab
into a fresh course and autogrades the batch with ``Course.autograde`` (checks in worker processes,
learner hosts in the sandbox, nbgrader recording), once per tree, the trees taking turns so that the
machine's load falls on both alike. It prints each round's wall time and CPU time (the grading
process and every process it started, all reaped by the end), the median of each tree and their
ratio, and whether the two trees gave every submission the same score. On a noisy machine compare
the ratios, and trust the CPU ratio over the wall-clock one: a busy neighbour stretches wall time.

With ``--recording`` it compares nbgrader's recording alone: in each round each tree grades the batch
once, untimed, then records it again into a fresh copy of the released course from the check results
that grading stored (as a resumed batch does: no check runs again), and reports the recording
thread's CPU per submission (``BatchAutograde.record``, the batch's first excluded: it makes nbgrader's
converter). A change to the recording is a few per cent of the whole engine's CPU, below what the
whole run resolves on this machine; measured alone, in turns, it shows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Runs inside one tree: release, autograde the batch, print the wall time and the scores as JSON.
ROUND = """
import json, resource, shutil, sys, tempfile, time
from pathlib import Path
tree, batch, jobs, recording = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "recording"
sys.path.insert(0, str(tree))
from grader.pipeline import Course
with tempfile.TemporaryDirectory() as work:
    work = Path(work)
    shutil.copytree(tree / "labs" / "source", work / "course" / "source")
    course = Course(work / "course")
    course.release(sorted({lab for _, lab in batch}))
    if recording:
        shutil.copytree(course.root, work / "again")
    for sample, lab in batch:
        shutil.copytree(tree / "tests" / "submissions" / sample / lab, work / "subs" / sample / lab)
    pairs = course.collect(work / "subs")
    def cpu():
        return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))

    started, cpu_before = time.perf_counter(), cpu()
    outcomes = course.autograde(pairs, jobs=jobs)
    seconds = time.perf_counter() - started
    per = []
    if recording:  # the same batch recorded again, from the check results just stored, into a fresh course
        from grader.course import BatchAutograde
        original = BatchAutograde.record
        def record(self, *args, **kwargs):
            start = time.thread_time()
            try:
                return original(self, *args, **kwargs)
            finally:
                per.append(time.thread_time() - start)
        BatchAutograde.record = record
        shutil.copytree(course.root / ".grading" / "results", work / "again" / ".grading" / "results")
        course = Course(work / "again")
        outcomes = course.autograde(course.collect(work / "subs"), jobs=jobs)
    scores = {f"{r['student']}/{r['lab']}": r["score"] for r in course.gradebook()}
# Every worker, fork server, supervisor and host has ended and been reaped by now: all their CPU is counted.
print(json.dumps({"seconds": seconds, "cpu": cpu() - cpu_before, "graded": sum(o.ok for o in outcomes), "scores": scores,
                  "recording": sum(per[1:]) / max(1, len(per) - 1)}))
"""


def shared_batch(old: Path, new: Path) -> list[tuple[str, str]]:
    def samples(tree: Path) -> set[tuple[str, str]]:
        return {(p.parent.parent.name, p.parent.name) for p in (tree / "tests" / "submissions").glob("*/*/*.ipynb")}

    return sorted(samples(old) & samples(new))


def one_round(tree: Path, batch: list[tuple[str, str]], jobs: int, recording: bool = False) -> dict:
    """One round in ``tree``, in a process of its own: its wall time, its CPU, how many were graded, every score; with
    ``recording``, the scores recorded again from the stored check results, and that recording's CPU per submission."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryDirectory() as cwd:  # nothing is written into either tree's folder
        done = subprocess.run(
            [sys.executable, "-c", ROUND, str(tree), json.dumps(batch), str(jobs), "recording" if recording else "all"],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"grading in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(
    old: Path, new: Path, rounds: int, jobs: int, recording: bool = False, samples: int | None = None, say=print
) -> dict:
    """``rounds`` rounds per tree, the trees taking turns: each tree's figures per round, their medians and new / old,
    and the submissions whose scores differ."""
    batch = shared_batch(old, new)[:samples]
    if len(batch) < (2 if recording else 1):
        raise SystemExit(
            f"{len(batch)} submissions to compare: give --samples of at least 2 (with --recording the first of a batch "
            "is not counted, since it makes nbgrader's converter), and two trees that share sample submissions."
        )
    say(f"batch: {len(batch)} ordinary submissions both trees hold; {rounds} rounds each, {jobs} jobs")
    kinds = ("wall", "CPU", "recording") if recording else ("wall", "CPU")
    figures: dict[str, dict[Path, list[float]]] = {kind: {old: [], new: []} for kind in kinds}
    scores: dict[Path, dict] = {}
    for number in range(rounds):
        for tree in (old, new) if number % 2 == 0 else (new, old):
            result = one_round(tree, batch, jobs, recording)
            figures["wall"][tree].append(result["seconds"])
            figures["CPU"][tree].append(result["cpu"])
            line = f"round {number + 1} {tree}: {result['seconds']:.1f} s, {result['cpu']:.1f} CPU-s"
            if recording:
                figures["recording"][tree].append(result["recording"])
                line += f", recording {1000 * result['recording']:.1f} ms a submission"
            scores[tree] = result["scores"]
            say(f"{line}, {result['graded']}/{len(batch)} graded")
    report: dict = {}
    for kind in kinds:
        unit = {"wall": "s", "CPU": "CPU-s", "recording": "ms"}[kind]
        scale = 1000 if kind == "recording" else 1
        old_median, new_median = statistics.median(figures[kind][old]), statistics.median(figures[kind][new])
        report[kind] = {"old": old_median, "new": new_median, "ratio": new_median / old_median}
        what = "recording CPU a submission" if kind == "recording" else kind
        say(
            f"{what} median: old {scale * old_median:.1f} {unit}, new {scale * new_median:.1f} {unit}; "
            f"new/old = {new_median / old_median:.2f}"
        )
    report["differ"] = sorted(key for key in scores[old] if scores[old][key] != scores[new].get(key))
    report["count"] = len(scores[old])
    say(f"scores differ on {len(report['differ'])} of {report['count']}: {', '.join(report['differ']) or 'none'}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="A checkout of the older revision.")
    parser.add_argument(
        "new", type=Path, nargs="?", default=REPO, help="A checkout of the newer revision (default: this one)."
    )
    parser.add_argument("--rounds", type=int, default=3, help="Rounds per tree, taking turns (default 3).")
    parser.add_argument("--jobs", type=int, default=2, help="Worker processes (default 2).")
    parser.add_argument(
        "--recording", action="store_true", help="Also nbgrader's recording alone, from stored check results."
    )
    parser.add_argument("--samples", type=int, help="Only the first N submissions of the batch (default: all).")
    args = parser.parse_args()
    compare(args.old.resolve(), args.new.resolve(), args.rounds, args.jobs, args.recording, args.samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
