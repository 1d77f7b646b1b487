"""Lab 2's generated cases: the hypothesis strategies they come from, over the lab's vocabularies.

The grader does not run these: it reads the cases they give from ``lab2_cases.json``, written by

    python -m grader.labs.lab2_strategies

after a change of a strategy, of a vocabulary in ``grader.labs.lab2_scopes_expansion``, or of
hypothesis. ``tests/grader/test_lab2_cases.py`` fails until the file is written again.

An expansion case keeps the pieces its value is made of (the value is their concatenation), so a
disagreement can be shrunk piece by piece, within the vocabulary these strategies draw from.
"""

from __future__ import annotations

from grader.labs import lab2_scopes_expansion as lab
from grader.labs.cases import distinct
from grader.labs.generation import generated, st, write_cases  # hypothesis's strategies, where it is installed


def fragments(names: list[str]):
    """Pieces of a value that references ``names`` (and pieces that only look like references)."""
    return st.one_of(
        st.sampled_from(lab.LITERALS),
        st.builds(lambda v: f"${{{v}}}", st.sampled_from(names)),
        st.builds(lambda v, d: f"${{{v}:-{d}}}", st.sampled_from(names), st.sampled_from(lab.DEFAULTS)),
        # Not references: a bare $NAME, the shell's ${NAME-d}, a name that starts with a digit, a space inside.
        st.builds(lambda v: f"${v}", st.sampled_from(names)),
        st.builds(lambda v: f"${{{v}-d}}", st.sampled_from(names)),
        st.sampled_from(lab.ODD_REFERENCES),
    )


def expansion_cases(names: list[str]):
    """A value over a few of the names, and an environment that sets some of them (and perhaps others)."""
    env = st.dictionaries(st.sampled_from(names + ["W"]), st.sampled_from(lab.ENV_VALUES), max_size=3)
    return st.tuples(st.lists(fragments(names), max_size=4).map(tuple), env, st.booleans())


EXPANSION_CASES = (
    st.lists(st.sampled_from(lab.VARS), min_size=1, max_size=3, unique=True)
    .flatmap(expansion_cases)
    .filter(lambda case: lab.expansion_key("".join(case[0]), case[1], case[2]) not in lab.VISIBLE_EXPANSION_KEYS)
)

NAMES = st.sampled_from(lab.SERVER_NAMES)
VALUES = st.sampled_from(lab.VALUE_TEXTS)
STDIO = st.fixed_dictionaries(
    {"command": st.sampled_from(lab.COMMANDS)},
    optional={
        "type": st.just("stdio"),
        "args": st.lists(VALUES, max_size=2),
        "env": st.dictionaries(st.sampled_from(lab.ENV_KEYS), VALUES, max_size=2),
    },
)
REMOTE = st.fixed_dictionaries(
    {"type": st.sampled_from(lab.REMOTE_TYPES), "url": st.sampled_from(lab.URLS)},
    optional={"headers": st.dictionaries(st.sampled_from(lab.HEADER_KEYS), VALUES, max_size=2)},
)
ODD = st.sampled_from(lab.ODD_ENTRIES)
SCOPE = st.dictionaries(NAMES, st.one_of(STDIO, REMOTE, ODD), max_size=3)
RENV = st.dictionaries(st.sampled_from(lab.RVARS), st.sampled_from(lab.RENV_VALUES), max_size=4)
RESOLUTION_CASES = st.tuples(SCOPE, SCOPE, SCOPE, RENV)


def derive() -> dict[str, list]:
    """The cases of each kind, in the search's order, each once."""
    return {
        "expansion": distinct(generated(EXPANSION_CASES)),
        "resolution": distinct(generated(RESOLUTION_CASES)),
    }


def main() -> None:
    write_cases(lab.CASES_FILE, derive())
    print(f"wrote {lab.CASES_FILE}")


if __name__ == "__main__":
    main()
