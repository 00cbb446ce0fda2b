"""The grading pages: an assessor's report pages, and the organizer's giving and progress pages, from the
label-app kit (assessor.work.kit).

Everything the assessor's pages show comes from grades.judging, which reads no LLM grade and no run.
"""

from typing import cast

from django import forms

from assessor.names import NameField
from assessor.work.kit import LabelApp, Posted, time_or_dash
from assessor.work.organizing import WorkOrganizing
from assessor.work.pages import TopicsField, assessor_choices
from grades import judging
from grades.kinds import GRADE_WORK
from grades.models import GRADE_MEANINGS
from nuggets.banks import bank_names
from reports.texts import work_request

LABEL_CHOICES = [
    (str(grade), str(grade), str(grade), "yes" if grade >= 4 else "part" if grade >= 2 else "no")
    for grade in (0, 1, 2, 3, 4, 5)
]
DEFINITIONS = [(grade, GRADE_MEANINGS[grade]) for grade in (5, 4, 3, 2, 1, 0)]


class GiveGradesForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    bank = forms.ChoiceField(help_text="The question bank the reports are graded on (each topic must have it).")
    name = NameField(
        label="Grade source",
        required=False,
        max_length=100,
        help_text=f"The name the grades are kept under; defaults to {judging.PEOPLE_SOURCE!r}.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["bank"]).choices = [(name, name) for name in bank_names()]


def _give(topic, data: dict, organizer):
    return judging.grade_work_give(
        topic=topic, assessor=data["assessor"], by=organizer, name=data["name"], bank=data["bank"]
    )


GRADING = LabelApp(
    namespace="grades",
    item="report",
    template="grades/judge.html",
    label_choices=LABEL_CHOICES,
    page_load=judging.report_page_load,
    save=judging.grade_save,
    posted=(Posted("question", "question"),),
    submit=judging.grade_submit,
    empty="has no report to grade yet",
    context=lambda work: {"definitions": DEFINITIONS, **work_request(work)},
    organizing=WorkOrganizing(
        kinds=(GRADE_WORK,),
        title="Grading",
        form=GiveGradesForm,
        give=_give,
        progress=judging.organizer_progress,
        detail=judging.work_detail,
        templates=("grades/organize.html", "grades/organize_work.html"),
        url_name="grades:organize",
        item_labels=time_or_dash,
    ),
)
