"""Agreement of two ARGUE-style sources on the judgments both made, and of an ARGUE-style source with a
support method of the TREC 2024 family.

Two sources pair up item by item: a citation (does the document support its sentence?) and a
(sentence, question, gold answer) (does the sentence agree with it?). `argue_confusions` gives one matrix
per judgment; the family's `crosstab` (what the meta-evaluation shows for `argue:A` against `argue:B`)
pools both, every yes/no judgment one item.

A support label of the first family (FS, PS, NS on a citation) and a yes/no support attestation are two
views of one question: by default FS is yes and PS and NS are no (`fs`); the other mapping (`fs_ps`) makes
PS yes too. Unjudged support labels and unjudged attestations are left out. Only counted judgments and
labels are read (assessor.scoring.lifecycle).
"""

from collections import Counter
from collections.abc import Collection

from argue.kinds import ARGUE_FAMILY
from argue.models import AnswerAttestation, SupportAttestation
from assessor.registry import Crosstab
from assessor.scoring.lifecycle import labels_counted
from metaeval.stats import Confusion, confusion_from_pairs
from support.models import SupportLabel

YES_NO = ("yes", "no")
SUPPORT_MAPPINGS: dict[str, dict[int, str]] = {
    "fs": {SupportLabel.Label.FS: "yes", SupportLabel.Label.PS: "no", SupportLabel.Label.NS: "no"},
    "fs_ps": {SupportLabel.Label.FS: "yes", SupportLabel.Label.PS: "yes", SupportLabel.Label.NS: "no"},
}


def supports_of(name: str) -> dict[int, str]:
    """citation id -> yes/no, of the source's counted support attestations (unjudged ones left out)."""
    rows = labels_counted(
        SupportAttestation.objects.filter(source__family=ARGUE_FAMILY, source__name=name).exclude(label="")
    )
    return dict(rows.order_by().values_list("citation_id", "label"))


def agreements_of(name: str) -> dict[tuple[int, int, int], str]:
    """(sentence, question, answer index) -> yes/no, of the source's counted answer attestations."""
    rows = labels_counted(AnswerAttestation.objects.filter(source__family=ARGUE_FAMILY, source__name=name))
    return {
        (sentence, question, index): label
        for sentence, question, index, label in rows.order_by().values_list(
            "sentence_id", "question_id", "answer_index", "label"
        )
    }


# The items of `item_labels`, as the meta-evaluation's judges name items (tuples of ints): a citation's support
# and a (sentence, question, gold answer)'s agreement, told apart by their first number.
SUPPORT_ITEM, ANSWER_ITEM = 0, 1


def item_labels(name: str, topics: Collection[str] | None = None) -> dict[str, dict[tuple[int, ...], str]]:
    """The registry's `LabelFamily.item_labels`: the source's counted yes/no judgments per topic, both kinds."""
    supports = labels_counted(
        SupportAttestation.objects.filter(source__family=ARGUE_FAMILY, source__name=name).exclude(label="")
    )
    answers = labels_counted(AnswerAttestation.objects.filter(source__family=ARGUE_FAMILY, source__name=name))
    if topics is not None:
        supports = supports.filter(citation__sentence__answer__topic_id__in=list(topics))
        answers = answers.filter(sentence__answer__topic_id__in=list(topics))
    result: dict[str, dict[tuple[int, ...], str]] = {}
    for topic, citation, label in supports.order_by().values_list(
        "citation__sentence__answer__topic_id", "citation_id", "label"
    ):
        result.setdefault(topic, {})[(SUPPORT_ITEM, citation)] = label
    for topic, sentence, question, index, label in answers.order_by().values_list(
        "sentence__answer__topic_id", "sentence_id", "question_id", "answer_index", "label"
    ):
        result.setdefault(topic, {})[(ANSWER_ITEM, sentence, question, index)] = label
    return result


def argue_confusions(name_a: str, name_b: str) -> dict[str, Confusion]:
    """Rows the first source, columns the second: "support" over citations, "answers" over gold answers."""
    return {
        "support": confusion_from_pairs(supports_of(name_a), supports_of(name_b), YES_NO),
        "answers": confusion_from_pairs(agreements_of(name_a), agreements_of(name_b), YES_NO),
    }


def _pooled(name: str) -> dict[tuple[str, object], str]:
    pooled: dict[tuple[str, object], str] = {("support", key): label for key, label in supports_of(name).items()}
    pooled.update({("answer", key): label for key, label in agreements_of(name).items()})
    return pooled


def crosstab(columns_a: tuple[str, ...], columns_b: tuple[str, ...]) -> Crosstab:
    """The registry's `ScoreFamily.crosstab`: both judgments pooled, each yes/no one item."""
    (name_a,), (name_b,) = columns_a, columns_b
    a, b = _pooled(name_a), _pooled(name_b)
    counts = Counter((label, b[key]) for key, label in a.items() if key in b)
    return Crosstab(labels=YES_NO, counts=dict(counts), total_a=len(a), total_b=len(b))


def support_labels_as_yes_no(method: str, *, mapping: str = "fs") -> dict[int, str]:
    """citation id -> yes/no, of a support method's counted labels (unjudged left out)."""
    as_yes_no = SUPPORT_MAPPINGS[mapping]
    rows = labels_counted(SupportLabel.objects.filter(method=method).exclude(label=SupportLabel.Label.UNJUDGED))
    return {citation: as_yes_no[label] for citation, label in rows.order_by().values_list("citation_id", "label")}


def support_crosstab(method: str, columns: tuple[str, ...], partial_yes: bool) -> Crosstab:
    """The registry's `ScoreFamily.support_crosstab`: a support method's labels as yes/no (FS yes; PS too when
    `partial_yes`), rows, against the source's support attestations, on the citations both judged."""
    (name,) = columns
    method_labels = support_labels_as_yes_no(method, mapping="fs_ps" if partial_yes else "fs")
    attested = supports_of(name)
    counts = Counter((label, attested[key]) for key, label in method_labels.items() if key in attested)
    return Crosstab(labels=YES_NO, counts=dict(counts), total_a=len(method_labels), total_b=len(attested))


def support_method_confusion(*, method: str, name: str, mapping: str = "fs") -> Confusion:
    """Rows the support method's labels as yes/no, columns the ARGUE-style source's, on the citations both
    judged."""
    return confusion_from_pairs(support_labels_as_yes_no(method, mapping=mapping), supports_of(name), YES_NO)
