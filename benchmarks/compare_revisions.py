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
tree, batch, jobs = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, str(tree))
from grader.pipeline import Course
with tempfile.TemporaryDirectory() as work:
    work = Path(work)
    shutil.copytree(tree / "labs" / "source", work / "course" / "source")
    course = Course(work / "course")
    course.release(sorted({lab for _, lab in batch}))
    for sample, lab in batch:
        shutil.copytree(tree / "tests" / "submissions" / sample / lab, work / "subs" / sample / lab)
    pairs = course.collect(work / "subs")
    def cpu():
        return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))

    started, cpu_before = time.perf_counter(), cpu()
    outcomes = course.autograde(pairs, jobs=jobs)
    seconds = time.perf_counter() - started
    scores = {f"{r['student']}/{r['lab']}": r["score"] for r in course.gradebook()}
# Every worker, fork server, supervisor and host has ended and been reaped by now: all their CPU is counted.
print(json.dumps({"seconds": seconds, "cpu": cpu() - cpu_before, "graded": sum(o.ok for o in outcomes), "scores": scores}))
"""


def shared_batch(old: Path, new: Path) -> list[tuple[str, str]]:
    def samples(tree: Path) -> set[tuple[str, str]]:
        return {(p.parent.parent.name, p.parent.name) for p in (tree / "tests" / "submissions").glob("*/*/*.ipynb")}

    return sorted(samples(old) & samples(new))


def one_round(tree: Path, batch: list[tuple[str, str]], jobs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryDirectory() as cwd:  # nothing is written into either tree's folder
        done = subprocess.run(
            [sys.executable, "-c", ROUND, str(tree), json.dumps(batch), str(jobs)],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"grading in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="A checkout of the older revision.")
    parser.add_argument(
        "new", type=Path, nargs="?", default=REPO, help="A checkout of the newer revision (default: this one)."
    )
    parser.add_argument("--rounds", type=int, default=3, help="Rounds per tree, taking turns (default 3).")
    parser.add_argument("--jobs", type=int, default=2, help="Worker processes (default 2).")
    args = parser.parse_args()
    old, new = args.old.resolve(), args.new.resolve()
    batch = shared_batch(old, new)
    print(f"batch: {len(batch)} ordinary submissions both trees hold; {args.rounds} rounds each, {args.jobs} jobs")
    seconds: dict[Path, list[float]] = {old: [], new: []}
    cpu: dict[Path, list[float]] = {old: [], new: []}
    scores: dict[Path, dict] = {}
    for number in range(args.rounds):
        for tree in (old, new) if number % 2 == 0 else (new, old):
            result = one_round(tree, batch, args.jobs)
            seconds[tree].append(result["seconds"])
            cpu[tree].append(result["cpu"])
            scores[tree] = result["scores"]
            print(
                f"round {number + 1} {tree}: {result['seconds']:.1f} s, {result['cpu']:.1f} CPU-s, {result['graded']}/{len(batch)} graded"
            )
    for what, figures, unit in (("wall", seconds, "s"), ("CPU", cpu, "CPU-s")):
        old_median, new_median = statistics.median(figures[old]), statistics.median(figures[new])
        print(
            f"{what} median: old {old_median:.1f} {unit}, new {new_median:.1f} {unit}; new/old = {new_median / old_median:.2f}"
        )
    differ = sorted(key for key in scores[old] if scores[old][key] != scores[new].get(key))
    print(f"scores differ on {len(differ)} of {len(scores[old])}: {', '.join(differ) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
