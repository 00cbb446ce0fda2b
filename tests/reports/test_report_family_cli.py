"""The kiddie collection through every step of the report family on the command line, with the fake LLM server:
requests and reports, preferences by an LLM and by a person, a PrefNugget bank post-edited by a person, grades
by an LLM and by a person, the leaderboards, the correlation with the kiddie truth, ARGUE-style judgments on a
bank of gold answers and a Crucible run from the PrefNugget bank.

Every figure is worked out here from the kiddie files and the fake server's rules (bench/fake_llm.py), written
again below, never read back from what the code stored."""

import json
import re
from collections import Counter
from io import StringIO
from math import gcd

import pytest
from django.core.management import call_command
from scipy import stats

from argue.scoring import argue_scores
from assessor.models import Answer, AssessorWork, LabelSource, Segment, Topic
from assessor.work.roles import Role
from grades.judging import grade_save, grade_submit, grade_work_give, report_order
from grades.models import GradeLabel
from grades.scoring import grade_scores
from nuggets.banks import Answer as GoldAnswer
from nuggets.banks import bank_questions
from nuggets.giving import nugget_work_give
from nuggets.models import NuggetSet
from nuggets.services import nugget_operation_apply, nugget_set_submit
from preferences.judging import pair_order, pair_token, preference_save, preference_submit, preference_work_give
from preferences.models import PreferenceLabel
from preferences.scoring import borda_scores
from prefnugget.models import QuestionOrigin
from reports.models import ReportRequest
from tests.builders import make_user
from tests.reports.kiddie import KIDDIE, KIDDIE_RUNS, KIDDIE_TOPICS
from tests.scenarios import nugget_set_of

pytestmark = pytest.mark.django_db

TRUTH_FILE = KIDDIE / "eval" / "kiddie_fake.eval.ir_measures.txt"
TRUTH = {"run1": 0.864, "run2": 0.692, "run3": 0.316, "run4": 0.088}  # the file's `all` rows
RUNS = ["run1", "run2", "run3", "run4"]


# --- the kiddie files, read here -----------------------------------------------------------------------------


def kiddie_requests() -> dict[str, dict]:
    lines = KIDDIE_TOPICS.read_text().splitlines()
    return {row["request_id"]: row for row in map(json.loads, filter(None, lines))}


def kiddie_reports() -> dict[tuple[str, str], list[dict]]:
    """(topic, run) -> the report's sentences ({"text", "citations"})."""
    reports = {}
    for path in KIDDIE_RUNS:
        for line in filter(None, path.read_text().splitlines()):
            row = json.loads(line)
            reports[(row["metadata"]["topic_id"], row["metadata"]["run_id"])] = row["responses"]
    return reports


def text_of(sentences: list[dict]) -> str:
    return " ".join(sentence["text"] for sentence in sentences)


# --- the fake server's rules, written again --------------------------------------------------------------------


def long_words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z0-9']+", text) if len(word) >= 4}


def fake_preference(request: dict, first: str, second: str) -> int:
    asked = long_words(request["title"] + " " + request.get("problem_statement", ""))
    a, b = len(asked & long_words(first)), len(asked & long_words(second))
    return 1 if a > b else 2 if b > a else 0


def fake_questions(winner: str, loser: str, given: list[str]) -> list[str]:
    questions: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", winner):
        question = " ".join(re.findall(r"[A-Za-z0-9']+", sentence)[:5]) + "?"
        if sentence.strip() and sentence.strip() not in loser and question not in given and question not in questions:
            questions.append(question)
    return questions


def fake_grade(question: str, passage: str) -> int:
    return min(5, len(long_words(question) & long_words(passage)))


# --- PrefNugget's rules, written again ---------------------------------------------------------------------------


def sampled_pairs(runs: list[str]) -> list[tuple[str, str]]:
    """PrefNugget's sampling with four others (protocol: The second family)."""
    pairs: list[tuple[str, str]] = []
    n = len(runs)
    for i, run in enumerate(runs):
        others = runs[i + 1 :] + runs[:i]
        stride = max(1, (n - 1) // 4)
        for other in others[i % gcd(stride, n - 1) :: stride][:4]:
            if (run, other) not in pairs and (other, run) not in pairs:
                pairs.append((run, other))
    return pairs


def borda(labels: dict[tuple[str, str], int]) -> Counter:
    counts: Counter = Counter()
    for (first, second), label in labels.items():
        if label in (1, 2):
            winner, loser = (first, second) if label == 1 else (second, first)
            counts[winner] += 1
            counts[loser] -= 1
    return counts


def expected_bank(labels: dict[tuple[str, str], int], texts: dict[str, str]) -> tuple[list[str], int]:
    """A topic's PrefNugget bank from its preferences (in sampling order) and the number of calls it takes."""
    scores = borda(labels)
    records = [(first, second, label) for (first, second), label in labels.items() if label in (1, 2)]
    records += [(second, first, 3 - label) for first, second, label in records]
    base = [(r[0], r[1]) if r[2] == 1 else None for r in records]
    winners = sorted({pair[0] for pair in base if pair})
    ordered = [pair for winner in winners for pair in base if pair and pair[0] == winner]
    ordered.sort(key=lambda pair: -(scores[pair[0]] + 0.99 * scores[pair[1]]))
    ordered = ordered[:100]
    bank: list[str] = []
    calls = 0
    for start in range(0, len(ordered), 2):
        if len(bank) > 20:
            break
        given = list(bank)
        for winner, loser in ordered[start : start + 2]:
            calls += 1
            for question in fake_questions(texts[winner], texts[loser], given)[:2]:
                if question not in bank:
                    bank.append(question)
    return bank[:20], calls


# --- the steps ----------------------------------------------------------------------------------------------------


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def calls_of(server, step) -> int:
    before = server.count
    step()
    return server.count - before


def truth_pair(source: str, metric: str) -> dict:
    output = run(
        "metaeval", "--a", source, "--truth", "scores:kiddie-truth", "--metric", f"{metric}=RELEVANCE",
        "--on-missing", "zero", "--json",
    )  # fmt: skip
    (pair,) = json.loads(output)["pairs"]
    return pair


def assert_correlations(pair: dict, judged: dict[str, float]) -> None:
    truth = [TRUTH[r] for r in RUNS]
    mine = [judged.get(r, 0.0) for r in RUNS]
    assert pair["runs"] == 4
    for name, figure in [
        ("kendall", stats.kendalltau(truth, mine).statistic),
        ("pearson", stats.pearsonr(truth, mine).statistic),
        ("spearman", stats.spearmanr(truth, mine).statistic),
    ]:
        assert pair[name] == pytest.approx(figure, abs=1e-9), name


def test_the_kiddie_collection_through_the_report_family_on_the_command_line(llm_server, tmp_path):
    requests, reports = kiddie_requests(), kiddie_reports()
    topics = sorted(requests)
    organizer, assessor = make_user(Role.ORGANIZER, username="olga"), make_user(Role.ASSESSOR, username="pat")

    # 1. Requests and reports.
    run("import_requests", str(KIDDIE_TOPICS))
    run("import_reports", *map(str, KIDDIE_RUNS))
    assert (
        sorted(ReportRequest.objects.values_list("topic_id", flat=True))
        == topics
        == sorted({topic for topic, _ in reports})
    )
    assert Answer.objects.count() == len(reports) == 20
    answer_of = {(a.topic_id, a.run.run_id): a.pk for a in Answer.objects.select_related("run")}
    run_of = {pk: key[1] for key, pk in answer_of.items()}

    # 2. Preferences by the LLM: 6 pairs a topic for 4 reports, one call each, labels by the fake rule.
    pairs = sampled_pairs(RUNS)
    assert pairs == [("run1", "run2"), ("run1", "run3"), ("run1", "run4"), ("run2", "run3"), ("run2", "run4"),
                     ("run3", "run4")]  # fmt: skip
    calls = calls_of(llm_server, lambda: run("run_preferences", "--name", "llm-prefs", "--sync", "--threads", "1"))
    assert calls == 6 * len(topics) == 30
    expected_labels = {
        topic: {
            (a, b): fake_preference(requests[topic], text_of(reports[(topic, a)]), text_of(reports[(topic, b)]))
            for a, b in pairs
        }
        for topic in topics
    }
    stored = PreferenceLabel.objects.filter(source__name="llm-prefs", source__family="preferences")
    assert {(row.topic_id, run_of[row.first_id], run_of[row.second_id]): row.label for row in stored} == {
        (topic, a, b): label for topic, labels in expected_labels.items() for (a, b), label in labels.items()
    }
    assert all(row.job_id is not None and row.work_id is None for row in stored)

    # The Borda leaderboard's run order, from the stored labels by a few lines of code of its own.
    counted: Counter = Counter()
    for row in stored:
        if row.label in (1, 2):
            winner, loser = (row.first_id, row.second_id) if row.label == 1 else (row.second_id, row.first_id)
            counted[run_of[winner]] += 1
            counted[run_of[loser]] -= 1
    mine = {r: counted[r] / len(topics) for r in RUNS}
    expected_borda = {r: sum(borda(expected_labels[t])[r] for t in topics) / len(topics) for r in RUNS}
    assert mine == pytest.approx(expected_borda)
    leaderboard = borda_scores(name="llm-prefs")
    assert {r: leaderboard.run_means[r]["borda"] for r in RUNS} == pytest.approx(mine)

    # 3. A person's preferences on bee, through the preference page's services: the lower run number is better.
    work = preference_work_give(topic=Topic.objects.get(pk="bee"), assessor=assessor, by=organizer)
    for number, pair in enumerate(pair_order(work), start=1):
        left, right = run_of[pair[0]], run_of[pair[1]]
        work.refresh_from_db()
        preference_save(
            work_id=work.pk, user=assessor, number=number, label="1" if left < right else "2", previous="",
            expected_version=work.version, token=pair_token(pair),
        )  # fmt: skip
    work.refresh_from_db()
    preference_submit(work_id=work.pk, user=assessor, expected_version=work.version)
    people = borda_scores(name="people")
    # On bee, the source's one topic: run1 wins 3, run2 wins 2 and loses 1, ...
    assert {r: people.run_means[r]["borda"] for r in RUNS} == {"run1": 3, "run2": 1, "run3": -1, "run4": -3}

    # 4. PrefNugget's bank from the LLM's preferences: the questions the fake rule gives, in PrefNugget's order.
    texts = {topic: {r: text_of(reports[(topic, r)]) for r in RUNS} for topic in topics}
    expected = {topic: expected_bank(expected_labels[topic], texts[topic]) for topic in topics}
    calls = calls_of(
        llm_server,
        lambda: run("run_prefnugget", "--preferences", "llm-prefs", "--name", "pn-bank", "--sync", "--threads", "1"),
    )
    assert calls == sum(count for _, count in expected.values())
    made = bank_questions("pn-bank")
    assert {topic: [q.text for q in questions] for topic, questions in made.items()} == {
        topic: bank for topic, (bank, count) in expected.items() if count
    }
    for nugget_set in NuggetSet.objects.filter(name="pn-bank"):
        assert (nugget_set.form, nugget_set.kind, nugget_set.source.kind) == ("questions", "auto", LabelSource.Kind.LLM)
        assert nugget_set.job_id is not None and nugget_set.created_by_id is None
        assert set(nugget_set.nuggets.values_list("job_id", flat=True)) == {nugget_set.job_id}
        assert QuestionOrigin.objects.filter(nugget__nugget_set=nugget_set).exists()

    # 5. A person post-edits the bank of bee: one question reworded, a gold answer citing a report's document.
    bee_bank = [q.text for q in made["bee"]]
    edit = nugget_work_give(
        topic=Topic.objects.get(pk="bee"), assessor=assessor, condition="auto_edit", by=organizer,
        form="questions", drafts_name="pn-bank",
    )  # fmt: skip
    first = nugget_set_of(edit).nuggets.order_by("position").first()
    for operation, params in [
        ("edit", {"nugget": first.pk, "text": "How do bees turn nectar into honey?"}),
        ("answer_add", {"nugget": first.pk, "answer_text": "They fan it with their wings", "documents": "Honey"}),
    ]:
        nugget_operation_apply(
            work_id=edit.pk, user=assessor, operation=operation, params=params,
            expected_version=nugget_set_of(edit).version,
        )  # fmt: skip
    nugget_set_submit(work_id=edit.pk, user=assessor, expected_version=nugget_set_of(edit).version)
    edited = bank_questions("bank_auto_edit")["bee"]
    assert [q.text for q in edited] == ["How do bees turn nectar into honey?", *bee_bank[1:]]
    assert edited[0].answers == (GoldAnswer("They fan it with their wings", ("Honey",)),) and edited[0].rule == "or"
    assert nugget_set_of(edit).created_by == assessor

    # 6. Grades by the LLM on the post-edited bank: 4 reports x its questions, graded by the fake rule.
    questions = [q.text for q in edited]
    calls = calls_of(
        llm_server,
        lambda: run("run_grades", "--bank", "bank_auto_edit", "--name", "llm-grades", "--sync", "--threads", "1"),
    )
    assert calls == 4 * len(questions)
    llm_grades = {
        (run_of[g.answer_id], g.nugget.text): g.label
        for g in GradeLabel.objects.filter(source__name="llm-grades").select_related("nugget")
    }
    expected_grades = {(r, q): fake_grade(q, texts["bee"][r]) for r in RUNS for q in questions}
    assert llm_grades == expected_grades

    # 7. A person's grades through the grading services: run1 5, run2 4, run3 2, run4 0 on every question.
    person = {"run1": 5, "run2": 4, "run3": 2, "run4": 0}
    grading = grade_work_give(topic=Topic.objects.get(pk="bee"), assessor=assessor, by=organizer, bank="bank_auto_edit")
    ids = {n.text: n.pk for n in nugget_set_of(grading).nuggets.all()}
    for number, answer in enumerate(report_order(grading), start=1):
        for question in questions:
            grading.refresh_from_db()
            grade_save(
                work_id=grading.pk, user=assessor, number=number, question=ids[question],
                label=str(person[run_of[answer]]), previous="", expected_version=grading.version, token=None,
            )  # fmt: skip
    grading.refresh_from_db()
    grade_submit(work_id=grading.pk, user=assessor, expected_version=grading.version)
    assert AssessorWork.objects.get(pk=grading.pk).status == AssessorWork.Status.SUBMITTED

    # The grade leaderboards: cover4 = #(grade >= 4) / N on bee, the one request graded; a run's mean is over the
    # five requests, the four without the bank counting 0.
    assert len(topics) == 5
    llm_cover = {r: sum(expected_grades[(r, q)] >= 4 for q in questions) / len(questions) / len(topics) for r in RUNS}
    llm_avg = {r: sum(expected_grades[(r, q)] for q in questions) / len(questions) / len(topics) for r in RUNS}
    scores = grade_scores(name="llm-grades")
    assert {r: scores.run_means[r]["cover4"] for r in RUNS} == pytest.approx(llm_cover)
    assert {r: scores.run_means[r]["avggrade"] for r in RUNS} == pytest.approx(llm_avg)
    people_grades = grade_scores(name="people")
    assert {r: people_grades.run_means[r]["cover4"] for r in RUNS} == {
        "run1": 1 / 5,
        "run2": 1 / 5,
        "run3": 0,
        "run4": 0,
    }

    # 8. The kiddie truth, and both LLM sources against it, as scipy correlates the run means.
    run("import_scores", str(TRUTH_FILE), "--name", "kiddie-truth", "--format", "ir_measures")
    assert_correlations(truth_pair("grades:llm-grades", "avggrade"), llm_avg)
    assert_correlations(truth_pair("preferences:llm-prefs", "borda"), expected_borda)

    # 9. ARGUE-style judgments on a bank of gold answers citing kiddie documents (an AutoJudge v3 file).
    gold = {
        "How do bees make honey?": ("nectar", "Nectar", "vital"),
        "Why do bees sting?": ("protect", "Bee_sting", "okay"),
    }
    bank_file = tmp_path / "gold.jsonl"
    bank_file.write_text(json.dumps({
        "query_id": "bee", "title_query": requests["bee"]["title"], "format_version": "v3",
        "nugget_bank": {
            question: {"question": question, "answers": {answer: {"answer": answer, "references": [{"doc_id": doc}]}},
                       "aggregator_type": "OR", "importance": importance}
            for question, (answer, doc, importance) in gold.items()
        },
    }) + "\n")  # fmt: skip
    run("import_banks", str(bank_file), "--name", "gold")
    # One call per (sentence, cited document), one per (sentence, gold answer) whose document it cites.
    argue_calls = sum(
        len(s["citations"]) + sum(doc in s["citations"] for _, doc, _ in gold.values())
        for r in RUNS
        for s in reports[("bee", r)]
    )
    calls = calls_of(
        llm_server, lambda: run("run_argue", "--bank", "gold", "--name", "argue-llm", "--sync", "--threads", "1")
    )
    assert calls == argue_calls == 26
    # Agreement: the gold answer in the sentence; coverage weighted vital 2, okay 1. By the fake rule a cited
    # document supports a sentence when the sentence is in it, and ARGUE credits only a sentence every citation of
    # which supports it.
    texts = dict(Segment.objects.values_list("pk", "text"))

    def coverage(supported) -> dict[str, float]:
        return {
            r: sum(
                (2 if importance == "vital" else 1)
                for answer, doc, importance in gold.values()
                if any(
                    doc in s["citations"] and answer in s["text"].lower() and supported(s) for s in reports[("bee", r)]
                )
            )
            / 3
            for r in RUNS
        }

    argue = argue_scores(name="argue-llm")
    in_documents = coverage(lambda s: all(s["text"] in texts[doc] for doc in s["citations"]))
    assert {r: argue.run_means[r]["weighted_coverage"] for r in RUNS} == pytest.approx(in_documents)
    # Judgments made elsewhere, scored by the app: the LLM's, exported, with every citation said to support its
    # sentence, imported as another source.
    judged = [json.loads(line) for line in run("export_argue", "--name", "argue-llm").splitlines()]
    for report in judged:
        for sentence in report["sentences"]:
            for citation in sentence["citations"]:
                citation["supports"] = "yes"
    (tmp_path / "argue-yes.jsonl").write_text("".join(json.dumps(report) + "\n" for report in judged))
    run("import_argue", str(tmp_path / "argue-yes.jsonl"), "--name", "argue-yes", "--bank", "gold")
    covered = coverage(lambda s: True)
    assert covered == {"run1": 1, "run2": 2 / 3, "run3": 0, "run4": 0}
    argue = argue_scores(name="argue-yes")
    assert {r: argue.run_means[r]["weighted_coverage"] for r in RUNS} == pytest.approx(covered)
    assert {r: argue.run_means[r]["nugget_coverage"] for r in RUNS} == {"run1": 1, "run2": 0.5, "run3": 0, "run4": 0}
    tsv = run("export_argue", "--name", "argue-yes", "--scores").splitlines()
    assert tsv[0] == "run_id\ttopic_id\tmetric\tvalue"
    rows = {tuple(line.split("\t")[:3]): float(line.split("\t")[3]) for line in tsv[1:]}
    assert rows[("run2", "all", "weighted_coverage")] == pytest.approx(2 / 3)
    assert rows[("run2", "bee", "nugget_coverage")] == 0.5

    # 10. Crucible's run written from the PrefNugget bank: a report per topic with a bank, each sentence citing
    # one document; the calls the dry run plans are the calls made.
    plan = run("run_crucible", "--bank", "pn-bank", "--documents", "3", "--chunks", "3", "--dry-run")
    planned = int(re.search(r"^(\d+) calls", plan, re.MULTILINE).group(1))
    chunks = Counter(line.split("\t")[0] for line in plan.splitlines() if line.count("\t") == 3)
    assert planned == sum(len(made[t]) * chunks[t] for t in made) > 0
    calls = calls_of(
        llm_server,
        lambda: run(
            "run_crucible",
            "--bank",
            "pn-bank",
            "--name",
            "crucible-pn",
            "--documents",
            "3",
            "--chunks",
            "3",
            "--sync",
            "--threads",
            "1",
        ),
    )
    assert calls == planned
    written = Answer.objects.filter(run__run_id="crucible-pn")
    assert sorted(written.values_list("topic_id", flat=True)) == sorted(made)
    for answer in written:
        assert all(s.citations.count() == 1 for s in answer.sentences.all())
