"""The answer's record types (agent/records/answer.py, agent/state.py) describe what the code
writes: the records validate against them as they are, with no key added or renamed."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from agent.answer.assemble import NO_EVIDENCE, build_answer
from agent.answer.status import failed_answer
from agent.records.answer import Answer
from agent.state import Reading, RunError

pytestmark = pytest.mark.unit


def test_the_records_written_validate_against_their_types():
    failed = failed_answer("every paper read failed (3 of 3)")
    assert TypeAdapter(Answer).validate_python(failed) == failed
    none = {**build_answer({"question": "q"}, None, None, []), "status": "ok"}
    assert TypeAdapter(Answer).validate_python(none) == none and none["text"] == NO_EVIDENCE
    reading = {"paper_id": "crf", "relevant": False, "failed": True}
    assert TypeAdapter(Reading).validate_python(reading) == reading
    error = {"node": "read", "error": "TimeoutError: read timed out", "kind": "call", "raw": ""}
    assert TypeAdapter(RunError).validate_python(error) == error


def test_a_record_without_its_keys_is_not_an_answer():
    with pytest.raises(ValidationError):
        TypeAdapter(Answer).validate_python({"text": "CRFs reach 95.7 F1."})
