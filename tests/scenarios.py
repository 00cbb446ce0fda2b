"""Scenarios several apps' tests share: a nugget workspace given to an assessor, and a topic to judge
with LLM output planted beside the assessor's work (for the blinding checks)."""

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.test import Client

from assessor.models import Answer, AssessorWork, Citation, Topic
from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role
from assignment import judging
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from nuggets import kinds as nugget_kinds
from nuggets.giving import nugget_work_give
from nuggets.models import Nugget, NuggetSet
from support import services
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_batch,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    make_user,
    source_of,
)


def make_draft_set(topic: Topic, texts: list[str], *, name: str = "draft") -> NuggetSet:
    batch = make_batch(kind=nugget_kinds.IMPORT_NUGGETS, file_name=f"{name}.jsonl")
    drafts = NuggetSet.objects.create(
        topic=topic, kind=NuggetSet.Kind.DRAFT, name=name, source=source_of("nuggets", name), imported_from=batch
    )
    Nugget.objects.bulk_create(
        Nugget(nugget_set=drafts, position=i, text=text, imported_from=batch) for i, text in enumerate(texts)
    )
    return drafts


def make_relevant_segments(topic: Topic, grades: list[int]) -> list:
    """Segments judged by NIST with these grades (0 is judged irrelevant)."""
    segments = []
    for index, grade in enumerate(grades):
        segment = make_segment(text=f"Segment {index} of {topic.pk}: grade {grade} passage about nuggets.")
        make_qrel(topic, segment, grade=grade, source="nist")
        segments.append(segment)
    return segments


def make_given_topic(
    *,
    condition: str = "manual",
    drafts: list[str] | None = None,
    grades: list[int] | None = None,
    assessor: User | None = None,
    organizer: User | None = None,
    query: str = "how do nuggets evaluate rag answers",
) -> AssessorWork:
    topic = make_topic(query=query)
    make_relevant_segments(topic, grades if grades is not None else [2, 1, 0, 3])
    if condition == NuggetSet.Kind.AUTO_EDIT:
        make_draft_set(topic, drafts if drafts is not None else [f"draft fact number {i}" for i in range(30)])
    assessor = assessor or make_user(Role.ASSESSOR)
    organizer = organizer or make_user(Role.ORGANIZER)
    return nugget_work_give(topic=topic, assessor=assessor, condition=condition, by=organizer)


def nugget_set_of(work: AssessorWork) -> NuggetSet:
    return NuggetSet.objects.get(topic_id=work.topic_id, name=work.nugget_set_name)


def texts_of(work: AssessorWork) -> list[str]:
    return list(nugget_set_of(work).nuggets.order_by("position").values_list("text", flat=True))


# --- Judging: a topic with three runs' answers and planted LLM output ---

# Strings that only LLM output and run names carry: none may reach an assessor.
RUN_NAMES = ["SECRETRUN-alpha", "SECRETRUN-beta", "SECRETRUN-gamma"]
LLM_NUGGET_TEXTS = ["LLMSECRETNUGGET one", "LLMSECRETNUGGET two"]
LLM_ASSIGNER = "gpt-secret-assigner"
LLM_METHOD = "llm-secret-judge"
LLM_FILE = "LLMSECRETFILE.jsonl"
HUMAN_NUGGETS = [("The answer names the capital", "vital"), ("It gives a date", "okay"), ("It cites a law", "vital")]


@dataclass
class Scenario:
    topic: Topic
    assessor: User
    organizer: User
    answers: list[Answer]
    nugget_set: NuggetSet
    nuggets: list[Nugget]
    missing_segment_id: str

    def forbidden(self) -> list[str]:
        return RUN_NAMES + LLM_NUGGET_TEXTS + [LLM_ASSIGNER, LLM_METHOD, LLM_FILE]


def make_scenario(*, plant_llm: bool = True, topic_id: str | None = None) -> Scenario:
    """A topic with three runs' answers, the assessor's nuggets and, planted beside them, LLM output.

    Every answer: sentence 0 cites a segment with text, sentence 1 cites
    nothing, sentence 2 cites a second segment; the third run's sentence 2
    cites a segment without text instead.
    """
    topic = make_topic(topic_id, query="what is the capital of the example country")
    assessor = make_user(Role.ASSESSOR)
    organizer = make_user(Role.ORGANIZER)
    seg_a = make_segment(text="The capital of the example country is Exampleton, since 1901.")
    seg_b = make_segment(text="Exampleton hosts the parliament.")
    seg_missing = make_segment(text="")
    answers = []
    for index, run_id in enumerate(RUN_NAMES):
        last = seg_missing if index == 2 else seg_b
        answers.append(
            make_answer(
                make_run(run_id),
                topic,
                [
                    (f"Answer {index} says the capital is Exampleton.", [seg_a]),
                    (f"Answer {index} adds an uncited remark.", []),
                    (f"Answer {index} mentions the parliament.", [last, seg_a]),
                ],
            )
        )
    nugget_set = NuggetSet.objects.create(
        topic=topic,
        kind=NuggetSet.Kind.MANUAL,
        name="manual",
        source=source_of("nuggets", "manual", kind="person"),
        created_by=assessor,
        seconds_spent=0,
    )
    nuggets = [
        Nugget.objects.create(nugget_set=nugget_set, position=i, text=text, importance=imp, created_by=assessor)
        for i, (text, imp) in enumerate(HUMAN_NUGGETS)
    ]
    if plant_llm:
        plant_llm_output(topic=topic, nuggets=nuggets, answers=answers)
    return Scenario(topic, assessor, organizer, answers, nugget_set, nuggets, seg_missing.docid)


def plant_llm_output(*, topic: Topic, nuggets: list[Nugget], answers: list[Answer]) -> None:
    batch = make_batch(kind=assignment_kinds.IMPORT_ASSIGNMENTS, file_name=LLM_FILE)
    auto_set = NuggetSet.objects.create(
        topic=topic, kind=NuggetSet.Kind.AUTO, name="llm-nuggets", source=source_of("nuggets", "llm-nuggets"),
        imported_from=batch,
    )  # fmt: skip
    auto_nuggets = [
        Nugget.objects.create(nugget_set=auto_set, position=i, text=text, importance="vital", imported_from=batch)
        for i, text in enumerate(LLM_NUGGET_TEXTS)
    ]
    assigner_source = source_of("assignment", LLM_ASSIGNER)
    method_source = source_of("support", LLM_METHOD)
    AssignmentLabel.objects.bulk_create(
        AssignmentLabel(
            answer=answer,
            nugget=nugget,
            assigner=LLM_ASSIGNER,
            assigner_kind=AssignmentLabel.AssignerKind.AUTO,
            source=assigner_source,
            label=AssignmentLabel.Label.PARTIAL_SUPPORT,
            imported_from=batch,
        )
        for answer in answers
        for nugget in nuggets + auto_nuggets
    )
    SupportLabel.objects.bulk_create(
        SupportLabel(
            citation=citation,
            method=LLM_METHOD,
            method_kind=SupportLabel.MethodKind.AUTO,
            source=method_source,
            label=SupportLabel.Label.PS,
            imported_from=batch,
        )
        for citation in Citation.objects.filter(sentence__answer__topic=topic)
    )
    scores_refresh(topics=[topic.pk], discover=True)  # as the imports of these rows would


def give_assign(scenario: Scenario) -> AssessorWork:
    return judging.assign_work_give(topic=scenario.topic, assessor=scenario.assessor, by=scenario.organizer)


def give_support(scenario: Scenario, kind: str) -> AssessorWork:
    return services.support_work_give(
        topic=scenario.topic, assessor=scenario.assessor, kind=kind, by=scenario.organizer
    )


def label_everything(work: AssessorWork, label: str = "support", *, choose: Callable[[], str] | None = None) -> None:
    """Label every nugget of every answer a ManualAssign work still asks for (all of them, or the changed ones),
    with `label`, or with what `choose` gives for each."""
    page = judging.assign_page_load(work=work)
    for number in range(1, page.total_answers + 1):
        page = judging.assign_page_load(work=work, number=number)
        for _, nugget, current, change in page.rows:
            if not current and change != "kept":
                work.refresh_from_db()
                judging.assignment_label_save(
                    work_id=work.pk, user=work.assessor, number=number, nugget_id=nugget.pk,
                    label=choose() if choose else label, previous="", expected_version=work.version,
                )  # fmt: skip
    work.refresh_from_db()


class Recorder:
    """A logged-in client that keeps the text of every response."""

    def __init__(self, user):
        self.client = Client()
        self.client.force_login(user)
        self.bodies: list[tuple[str, str]] = []

    def get(self, url: str, **kw):
        response = self.client.get(url, follow=True, **kw)
        self._keep(url, response)
        return response

    def post(self, url: str, data: dict, **kw):
        response = self.client.post(url, data, **kw)
        self._keep(url, response)
        return response

    def _keep(self, url: str, response) -> None:
        for hop, _status in getattr(response, "redirect_chain", []):
            assert not any(name in hop for name in RUN_NAMES), f"a run name in the URL {hop}"
        body = response.content.decode()
        self.bodies.append((url, body))

    def assert_blind(self, forbidden: list[str]) -> None:
        assert self.bodies
        for url, body in self.bodies:
            for secret in forbidden:
                assert secret not in body, f"{secret!r} reached the assessor in the response of {url}"
