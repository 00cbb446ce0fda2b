"""The apps on the answer-label kit, by name, as they registered while Django started (assessor.labelkit.parts)."""

from assessor.labelkit.spec import AnswerLabels

registered: dict[str, AnswerLabels] = {}
