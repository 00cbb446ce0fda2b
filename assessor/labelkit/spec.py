"""What an app on the answer-label kit declares: its names, its label model, its choices and their scores, its
prompt, and the sentences its pages say."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assessor.contracts import PromptText
from assessor.work.kit import LabelChoice


@dataclass(frozen=True)
class AnswerLabels:
    name: str  # the label and score family, the import kind, the URL namespace: "verdicts"
    title: str  # what people read: "Answer verdicts"
    noun: str  # one label, in messages and the file's field: "verdict"
    model: type[Any]  # a LabelProvenance with `answer` (a ForeignKey to Answer) and `label`
    choices: Sequence[LabelChoice]  # (value, key, name, tone), as the judging page shows them
    values: Mapping[str, float]  # the score of each label: {"yes": 1.0, "no": 0.0}
    metric: str  # the score's name in the score files and on the leaderboard: "yes"
    job_kind: str  # Job.kind of the LLM judge
    work_kind: str  # AssessorWork.kind of the people's work
    prompt: PromptText  # sent with {query} (the topic's) and {answer} (the answer's text)
    about_job: str  # a sentence for the jobs page
    about_work: str  # a sentence for the organizer's and the assessor's pages
    about_scores: str  # a sentence for the leaderboard: what a run's score is
    ranked_by: str  # the leaderboards index's link to a source's board reads "runs by <ranked_by>"
    stage: int = 3  # the queue's order of a topic's work (WorkPage.stage)
    order: int = 90  # the leaderboards index's order (ScoreFamily.order)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(choice[0] for choice in self.choices)
