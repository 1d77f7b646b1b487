"""nbgrader's cell-metadata check as the engine runs it (``grader.course``): one validator that remembers what it let
through, and the metadata schema checked once. It must refuse what nbgrader's own validator refuses, with the same
error, and let through what nbgrader lets through."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

from grader.course import SchemaCheckedOnce, metadata_validator

GOOD = {
    "grade": True,
    "solution": False,
    "locked": True,
    "grade_id": "check-1",
    "points": 2,
    "schema_version": 3,
}
BROKEN = {
    "points as text": {**GOOD, "points": "two"},
    "no grade": {key: value for key, value in GOOD.items() if key != "grade"},
    "an id that is a number": {**GOOD, "grade_id": 7},
    "an old schema": {**GOOD, "schema_version": 1},
    "locked as text": {**GOOD, "locked": "yes"},
}


def cell(meta: dict):
    made = new_code_cell("assert True")
    made.metadata["nbgrader"] = copy.deepcopy(meta)
    return made


def refusal(validator, meta: dict) -> str | None:
    """What ``validator`` raises for a cell of ``meta``, by its type and message; None when it lets it through."""
    try:
        validator.validate_cell(cell(meta))
    except Exception as exc:  # noqa: BLE001 - whatever nbgrader raises, compared by its type and message
        return f"{type(exc).__name__}: {exc}"
    return None


def nbgraders_own(meta: dict) -> str | None:
    return refusal(MetadataValidatorV3(), meta)


def ours(meta: dict) -> str | None:
    return refusal(metadata_validator(), meta)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_metadata_nbgrader_refuses_is_refused_with_the_same_error(case: str) -> None:
    expected = nbgraders_own(BROKEN[case])
    assert expected is not None
    assert ours(BROKEN[case]) == expected
    assert ours(BROKEN[case]) == expected  # and again: nothing wrong is remembered as passed


def test_good_metadata_passes_and_a_notebook_of_it_validates() -> None:
    assert nbgraders_own(GOOD) is None and ours(GOOD) is None
    notebook = new_notebook(cells=[cell(GOOD), cell({**GOOD, "grade_id": "check-2"})])
    metadata_validator().validate_nb(notebook)
    notebook.cells.append(cell(BROKEN["points as text"]))
    with pytest.raises(jsonschema.ValidationError):
        metadata_validator().validate_nb(notebook)


def test_a_schema_is_checked_and_its_validator_made_once() -> None:
    checked: list[dict] = []

    class Counted:  # the validator class jsonschema would pick, its schema checks counted
        @staticmethod
        def check_schema(schema) -> None:
            checked.append(schema)
            jsonschema.Draft7Validator.check_schema(schema)

        def __new__(cls, schema):
            return jsonschema.Draft7Validator(schema)

    module = type("Module", (), {})()
    module.validators = type("Validators", (), {"validator_for": staticmethod(lambda schema: Counted)})()
    module.exceptions = jsonschema.exceptions
    checking = SchemaCheckedOnce(module)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    for _ in range(3):
        checking.validate({"n": 1}, schema)
    with pytest.raises(jsonschema.ValidationError) as raised:
        checking.validate({"n": "one"}, schema)
    assert checked == [schema]
    try:
        jsonschema.validate({"n": "one"}, schema)
    except jsonschema.ValidationError as exc:
        assert str(raised.value) == str(exc)
    # A schema that is not one is refused as jsonschema.validate refuses it.
    with pytest.raises(jsonschema.SchemaError):
        SchemaCheckedOnce(jsonschema).validate({}, {"type": 12})
    # What nbgrader reaches of the module through it is the module's.
    assert SchemaCheckedOnce(jsonschema).ValidationError is jsonschema.ValidationError
