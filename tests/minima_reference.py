"""minima-llm 0.2.8's `TolerantChatAdapter` (minima_llm/dspy_adapter.py), loaded by path, and the reference's
output fields of the report family's prompts (the two bank prompts, the preference judgments, the grading),
with those of the ARGUE-style prompts that answer in the same layout.

requirements-reference.txt installs minima-llm without its dependencies, and dspy_adapter.py imports DSPy
at the top (and configures it, and defines DSPy language models) before and after the adapter. Only the
adapter's class is taken: its definition is read from the installed file and run as written, with two
names from DSPy stood in, neither of which its `parse` touches beyond raising: DSPy's `ChatAdapter` (the
base class: a bare class; `parse` and everything it calls are the adapter's own) and `AdapterParseError`
(a plain exception carrying the adapter's message).
"""

import ast
import importlib.util
import re
import typing
from pathlib import Path
from typing import Any, Literal, Optional

PACKAGE = "minima-llm==0.2.8"


class AdapterParseError(Exception):
    def __init__(self, adapter_name=None, signature=None, lm_response=None, parsed_result=None, message=None):
        self.parsed_result = parsed_result
        super().__init__(message)


class ChatAdapter:
    """DSPy's ChatAdapter, stood in: the reference's parse is entirely the subclass's own."""


def adapter_file() -> Path | None:
    spec = importlib.util.find_spec("minima_llm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "dspy_adapter.py"
    return path if path.is_file() else None


def tolerant_chat_adapter() -> Any:
    """An instance of the installed TolerantChatAdapter (its class definition run from the package's file)."""
    path = adapter_file()
    assert path is not None, f"{PACKAGE} is not installed"
    tree = ast.parse(path.read_text(), filename=str(path))
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TolerantChatAdapter"]
    namespace: dict[str, Any] = {
        "typing": typing,
        "re": re,
        "ChatAdapter": ChatAdapter,
        "AdapterParseError": AdapterParseError,
    }
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), namespace)
    return namespace["TolerantChatAdapter"]()


class _Field:
    def __init__(self, annotation: Any):
        self.annotation = annotation


class Signature:
    """What the adapter's parse reads of a DSPy signature: its output fields (in order) and their types."""

    def __init__(self, **fields: Any):
        self.output_fields = {name: _Field(annotation) for name, annotation in fields.items()}


# The starter kit's signatures as DSPy's ChainOfThought sends them (the system messages in
# prefnugget/prompts list the same fields with the same types): IterativeExtractDifferentiatingNuggets and
# IterativeGenerateNuggetQuestionsReportRequest.
# Optional as typing writes it: the adapter recognises an optional field by typing.Union, not by `X | None`.
EXTRACT = Signature(reasoning=str, differentiating_questions=Optional[list[str]], confidence=float)  # noqa: UP045
QUERY_ONLY = Signature(reasoning=str, questions=list[str], confidence=float)

# The starter kit's judging signatures (tag rag4reports-submission) as ChainOfThought sends them: PrefTiesJudgment
# and PrefJudgment (judges/shared/pref_common.py), GradeNuggetAnswer (judges/shared/rubric_common.py, whose own
# `reasoning` ChainOfThought puts first). Every field is required; a Literal is read as text, not checked.
PREFERENCE_TIES = Signature(reasoning=str, better_passage=Literal["1", "2", "0"], confidence=float)
PREFERENCE_MUST_DECIDE = Signature(reasoning=str, better_passage=Literal["1", "2"], confidence=float)
GRADE = Signature(reasoning=str, grade=Literal["0", "1", "2", "3", "4", "5"], confidence=float)
# The ARGUE-style prompts in the layout (argue/prompts.py): `reasoning` (str), then the yes/no field.
CITATION_SUPPORT = Signature(reasoning=str, supports=str)
ANSWER_AGREEMENT = Signature(reasoning=str, agrees=str)
