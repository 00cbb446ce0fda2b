"""A synthetic collection at TREC 2024 RAG scale, in the import formats, for benchmarks.

The shapes follow the real data: 301 topics (their real ids and queries when
the track's topics file is beside the checkout), 146 runs answering every
topic with about 10 sentences citing up to 20 references, 20 nuggets a topic
(about 55% vital), nugget labels for every answer in two conditions on the
same nugget sets, and support labels for every sentence by two methods. The
labels are drawn so that the conditions differ the way people and LLMs do:
the LLM labels partial_support much more often, and agrees with the person
on most pairs.
"""

import json
import random
import resource
import string
import time
import tracemalloc
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

REAL_TOPICS_FILE = Path(__file__).resolve().parent.parent.parent / "shared/data/trec-rag-2024/topics.rag24.test.txt"

SENTENCES_PER_ANSWER = (8, 12)
WORDS_PER_SENTENCE = (12, 30)
REFERENCES_PER_ANSWER = 20
SEGMENTS_PER_TOPIC = 20
RELEVANT_PER_TOPIC = (3, 7)
VITAL_SHARE = 0.55
MANUAL_PARTIAL_SHARE = 0.15
# Out of 100 sentences citing something: the first citation's manual label shares.
SUPPORT_MANUAL_SHARES = {2: 0.50, 1: 0.27, 0: 0.23}

# A small vocabulary makes text that looks like text to a database and costs
# little to generate.
WORDS = (
    "the of and a to in is that for it as was with be by on not are this from or which an "
    "have has can also their more most other such some these may into used when time about than "
    "people system energy water health school students study data model process cost risk "
    "treatment patients market company law state history river city island animal plant climate "
    "temperature pressure body blood heart brain cell protein vitamin disease infection symptoms "
    "effects benefits research evidence report level rate growth change loss increase reduce "
    "provide support include develop require protect improve affect cause allow produce"
).split()

T = TypeVar("T")


@dataclass(frozen=True)
class BenchTopic:
    id: str
    query: str
    segments: tuple[str, ...]  # the topic's top-20 list
    nuggets: tuple[tuple[str, str], ...]  # (text, importance), vital first
    difficulty: float


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choices(WORDS, k=words))
    return text[0].upper() + text[1:] + "."


def _topics_source(count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(id, query) pairs: the real test topics first, synthetic ones after them."""
    pairs: list[tuple[str, str]] = []
    if REAL_TOPICS_FILE.is_file():
        for line in REAL_TOPICS_FILE.read_text(encoding="utf-8").splitlines():
            if line.strip() and len(pairs) < count:
                topic_id, query = line.split("\t", 1)
                pairs.append((topic_id, query))
    taken = {topic_id for topic_id, _ in pairs}
    serial = 900000
    while len(pairs) < count:
        serial += 1
        topic_id = f"2024-{serial}"
        if topic_id not in taken:
            pairs.append((topic_id, f"what is {' '.join(rng.choices(WORDS, k=rng.randint(3, 8)))}?"))
    return pairs


def _docid(rng: random.Random, index: int) -> str:
    bundle, offset = rng.randint(0, 58), rng.randint(10**6, 3 * 10**9)
    return f"msmarco_v2.1_doc_{bundle:02d}_{offset}#{index}_{rng.randint(10**6, 4 * 10**9)}"


def _topics_make(count: int, nuggets: int, rng: random.Random) -> list[BenchTopic]:
    topics = []
    for topic_id, query in _topics_source(count, rng):
        segments = tuple(_docid(rng, index) for index in range(SEGMENTS_PER_TOPIC))
        vital = sum(rng.random() < VITAL_SHARE for _ in range(nuggets))
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(3, 10))) for _ in range(nuggets)]
        importance = ["vital"] * vital + ["okay"] * (nuggets - vital)
        topics.append(
            BenchTopic(
                id=topic_id,
                query=query,
                segments=segments,
                nuggets=tuple(zip(texts, importance, strict=True)),
                difficulty=rng.gauss(0, 0.12),
            )
        )
    return topics


def _manual_label(p_support: float, rng: random.Random) -> str:
    draw = rng.random()
    if draw < p_support:
        return "support"
    if draw < p_support + MANUAL_PARTIAL_SHARE:
        return "partial_support"
    return "not_support"


# How an LLM's label departs from the person's: P(llm label | manual label).
AUTO_GIVEN_MANUAL = {
    "support": (("support", 0.70), ("partial_support", 0.25), ("not_support", 0.05)),
    "partial_support": (("support", 0.30), ("partial_support", 0.50), ("not_support", 0.20)),
    "not_support": (("support", 0.06), ("partial_support", 0.22), ("not_support", 0.72)),
}
SUPPORT_AUTO_GIVEN_MANUAL = {
    2: ((2, 0.80), (1, 0.15), (0, 0.05)),
    1: ((2, 0.35), (1, 0.45), (0, 0.20)),
    0: ((2, 0.10), (1, 0.20), (0, 0.70)),
}


def _draw(pairs, rng: random.Random):
    draw, total = rng.random(), 0.0
    for value, probability in pairs:
        total += probability
        if draw < total:
            return value
    return pairs[-1][0]


def _answer(topic: BenchTopic, rng: random.Random) -> tuple[list[str], list[dict]]:
    """References (a shuffled top-20 list) and sentences with 0-3 citations each."""
    references = list(topic.segments[:REFERENCES_PER_ANSWER])
    rng.shuffle(references)
    sentences = []
    for _ in range(rng.randint(*SENTENCES_PER_ANSWER)):
        cited = rng.sample(range(len(references)), k=rng.choice((0, 1, 1, 2, 2, 3, 3)))
        sentences.append({"text": _sentence(rng, rng.randint(*WORDS_PER_SENTENCE)), "citations": sorted(cited)})
    return references, sentences


def _dumps(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def _normalized_query(query: str) -> str:
    # The nugget file's `query` drops punctuation, as NIST's does.
    return query.translate(str.maketrans("", "", string.punctuation)).strip()


def _write_topics(path: Path, topics: list[BenchTopic]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for topic in topics:
            out.write(f"{topic.id}\t{topic.query}\n")


def _write_segments(path: Path, topics: list[BenchTopic], rng: random.Random) -> None:
    with path.open("w", encoding="utf-8") as out:
        for topic in topics:
            for docid in topic.segments:
                words = rng.randint(60, 140)
                out.write(_dumps({"docid": docid, "segment": " ".join(rng.choices(WORDS, k=words))}))


def _write_qrels(path: Path, topics: list[BenchTopic], rng: random.Random) -> None:
    with path.open("w", encoding="utf-8") as out:
        for topic in topics:
            relevant = set(rng.sample(range(len(topic.segments)), k=rng.randint(*RELEVANT_PER_TOPIC)))
            for index, docid in enumerate(topic.segments):
                grade = rng.choice((1, 1, 2, 3)) if index in relevant else 0
                out.write(f"{topic.id} 0 {docid} {grade}\n")


def _support_sentences(
    sentences: list[dict], references: list[str], rng: random.Random
) -> tuple[list[dict], list[dict]]:
    """Each sentence's first citation judged by a person from scratch and by an LLM, drawn as NIST's shares go."""
    scratch_sentences, auto_sentences = [], []
    for index, sentence in enumerate(sentences):
        scratch_citations, auto_citations = [], []
        if sentence["citations"]:
            reference = references[sentence["citations"][0]]
            manual = _draw(tuple(SUPPORT_MANUAL_SHARES.items()), rng)
            auto = _draw(SUPPORT_AUTO_GIVEN_MANUAL[manual], rng)
            scratch_citations.append({"citationID": 0, "reference": reference, "support": str(manual)})
            auto_citations.append({"citationID": 0, "reference": reference, "support": str(auto)})
        scratch_sentences.append({"sentenceID": index, "text": sentence["text"], "citations": scratch_citations})
        auto_sentences.append({"sentenceID": index, "text": sentence["text"], "citations": auto_citations})
    return scratch_sentences, auto_sentences


def _answers_write(
    *,
    run_id: str,
    team: str,
    quality: float,
    topics: list[BenchTopic],
    rng: random.Random,
    run_out: TextIO,
    manual_out: TextIO,
    auto_out: TextIO,
    scratch_out: TextIO,
    support_auto_out: TextIO,
) -> None:
    for topic in topics:
        references, sentences = _answer(topic, rng)
        answer_text = " ".join(sentence["text"] for sentence in sentences)
        words = len(answer_text.split())
        run_out.write(
            _dumps(
                {
                    "run_id": run_id,
                    "topic_id": topic.id,
                    "topic": topic.query,
                    "references": references,
                    "response_length": words,
                    "answer": sentences,
                }
            )
        )
        answer_quality = quality - topic.difficulty + rng.gauss(0, 0.08)
        manual_nuggets, auto_nuggets = [], []
        for text, importance in topic.nuggets:
            p_support = min(max(answer_quality + (0.08 if importance == "vital" else 0.0), 0.0), 0.85)
            manual = _manual_label(p_support, rng)
            auto = _draw(AUTO_GIVEN_MANUAL[manual], rng)
            manual_nuggets.append({"text": text, "importance": importance, "assignment": manual})
            auto_nuggets.append({"text": text, "importance": importance, "assignment": auto})
        header = {"query": _normalized_query(topic.query), "qid": topic.id, "run_id": run_id}
        manual_out.write(
            _dumps({**header, "answer_text": answer_text, "response_length": words, "nuggets": manual_nuggets})
        )
        auto_out.write(
            _dumps({**header, "answer_text": answer_text, "response_length": words, "nuggets": auto_nuggets})
        )

        # The support files name the run with its team prefix and judge each
        # sentence's first citation only, as NIST's do.
        scratch_sentences, auto_sentences = _support_sentences(sentences, references, rng)
        support_header = {"topic_id": topic.id, "run_id": f"{team}.{run_id}"}
        scratch_out.write(_dumps({**support_header, "sentences": scratch_sentences}))
        support_auto_out.write(_dumps({**support_header, "sentences": auto_sentences}))


def benchmark_collection_build(
    *, folder: Path, topics: int = 301, runs: int = 146, nuggets: int = 20, seed: int = 0
) -> dict[str, Path | list[Path]]:
    """Write the collection's files into `folder`; returns their paths by role.

    Memory stays flat: answers are written as they are drawn, never held.
    """
    if topics < 1 or runs < 1 or not 1 <= nuggets <= 20:
        raise ValueError("need at least 1 topic and 1 run, and 1 to 20 nuggets a topic")
    rng = random.Random(seed)
    folder = Path(folder)
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    # Each path by kind, and under "runs" the list of the runs' files.
    paths: dict[str, Any] = {
        "topics": folder / "topics.tsv",
        "segments": folder / "segments.jsonl",
        "qrels": folder / "qrels.txt",
        "runs": [],
        "assignments_manual": folder / "assignments_manual.jsonl",
        "assignments_auto": folder / "assignments_auto.jsonl",
        "support_scratch": folder / "support_scratch.jsonl",
        "support_auto": folder / "support_auto.jsonl",
    }
    bench_topics = _topics_make(topics, nuggets, rng)
    _write_topics(paths["topics"], bench_topics)
    _write_segments(paths["segments"], bench_topics, rng)
    _write_qrels(paths["qrels"], bench_topics, rng)

    label_files = ("assignments_manual", "assignments_auto", "support_scratch", "support_auto")
    with ExitStack() as stack:
        outs = {name: stack.enter_context(paths[name].open("w", encoding="utf-8")) for name in label_files}
        for number in range(1, runs + 1):
            run_id = f"bench_run_{number:03d}"
            run_path = folder / "runs" / f"{run_id}.jsonl"
            paths["runs"].append(run_path)
            with run_path.open("w", encoding="utf-8") as run_out:
                _answers_write(
                    run_id=run_id,
                    team=f"team{number % 40:02d}",
                    quality=rng.uniform(0.15, 0.65),
                    topics=bench_topics,
                    rng=rng,
                    run_out=run_out,
                    manual_out=outs["assignments_manual"],
                    auto_out=outs["assignments_auto"],
                    scratch_out=outs["support_scratch"],
                    support_auto_out=outs["support_auto"],
                )
    return paths


# --- Measuring -----------------------------------------------------------------


@dataclass
class Measure:
    step: str
    seconds: float
    peak_rss_mib: float  # the process's peak resident memory so far
    python_peak_mib: float | None = None  # tracemalloc's peak during the step, when traced
    note: str = ""
    # CPU time of this process: on a busy machine it moves less than the wall
    # clock (a database server's own time is not in it).
    cpu_seconds: float = 0.0

    def line(self) -> str:
        traced = f"  python peak {self.python_peak_mib:7.1f} MiB" if self.python_peak_mib is not None else ""
        return (
            f"{self.step:<42} {self.seconds:8.2f} s  cpu {self.cpu_seconds:8.2f} s  "
            f"rss peak {self.peak_rss_mib:7.1f} MiB{traced}  {self.note}"
        )


def peak_rss_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measured(step: str, work: Callable[[], T], *, trace: bool = False) -> tuple[Measure, T]:
    """Run `work`, timing it; with `trace`, also the peak of Python allocations (slower)."""
    if trace:
        tracemalloc.start()
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    try:
        value = work()
    finally:
        seconds = time.perf_counter() - started
        cpu = cpu_seconds() - cpu_before
        python_peak = None
        if trace:
            python_peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
    measure = Measure(
        step=step, seconds=seconds, peak_rss_mib=peak_rss_mib(), python_peak_mib=python_peak, cpu_seconds=cpu
    )
    return measure, value
