"""Pure rules of the nugget workspace: no ORM here, plain data in and out.

The operations in `nuggets/editing.py` and `nuggets/undo.py` load rows, call these, and write back.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# Origins, as stored in Nugget.origin (kept in step with Nugget.Origin).
KEPT = "kept"
REWORDED = "reworded"
MERGED = "merged"
SPLIT = "split"
ADDED = "added"

# A nugget is an atomic fact of 1-12 words; longer ones are flagged, not refused,
# because the assessor may be mid-way through a split.
MAX_WORDS = 12
MAX_TEXT_CHARS = 1000


class WorkspaceError(Exception):
    """An operation the workspace refuses; the message is shown to the assessor as is."""

    status = 400

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


class InvalidOperation(WorkspaceError):
    pass


class CapReached(WorkspaceError):
    pass


class SetFrozen(WorkspaceError):
    status = 409


class VersionConflict(WorkspaceError):
    status = 409

    def __init__(self, *, expected: int | None, current: int):
        self.expected = expected
        self.current = current
        if expected is None:
            # A change that does not say which list it was made on could undo someone's newer work.
            message = "This change does not say which version of the list it was made on: reload the page and redo it."
        else:
            message = (
                f"This topic's nuggets were changed elsewhere (another tab or window): you had version {expected}, "
                f"the saved list is at version {current}. Your change was not saved; reload the latest list and redo it."
            )
        super().__init__(message)


def text_clean(text: str) -> str:
    """One line of text, whitespace collapsed; refuses empty and overlong texts."""
    cleaned = " ".join((text or "").split())
    if not cleaned:
        raise InvalidOperation("A nugget needs some text.")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise InvalidOperation(f"A nugget is at most {MAX_TEXT_CHARS} characters (this one has {len(cleaned)}).")
    return cleaned


def split_texts(raw: str | Sequence[str]) -> list[str]:
    """The parts of a split: one per line (or list item), blank ones dropped; at least two."""
    lines = raw.splitlines() if isinstance(raw, str) else list(raw)
    parts = [text_clean(line) for line in lines if line.strip()]
    if len(parts) < 2:
        raise InvalidOperation("A split needs at least two parts, one per line.")
    return parts


def cap_check(*, count_after: int, cap: int, kind_label: str, unit: str = "nuggets") -> None:
    if count_after > cap:
        raise CapReached(f"{kind_label} allows at most {cap} {unit}: delete or merge one before adding another.")


def origin_after_reword(*, origin: str, new_text: str, draft_texts: Sequence[str]) -> str:
    """A kept draft that is reworded becomes `reworded`; reworded back to its draft's words, `kept` again.

    Merged, split and added nuggets keep their origin: the rewording is part of that story.
    """
    if origin not in (KEPT, REWORDED):
        return origin
    if len(draft_texts) == 1 and " ".join(draft_texts[0].split()) == new_text:
        return KEPT
    return REWORDED


def importance_of_merge(importances: Iterable[str]) -> str:
    """A merge of a vital nugget stays vital; of okay ones okay; of unlabelled drafts, unlabelled."""
    values = set(importances)
    if "vital" in values:
        return "vital"
    if "okay" in values:
        return "okay"
    return ""


def submit_problems(*, nuggets: Sequence[tuple[int, str, str]], cap: int) -> list[str]:
    """What stops a list from being submitted; `nuggets` are (position, text, importance)."""
    problems = []
    if not nuggets:
        problems.append("The list is empty: write at least one nugget.")
    missing = [position + 1 for position, _, importance in nuggets if importance not in ("vital", "okay")]
    if missing:
        numbers = ", ".join(str(n) for n in missing)
        problems.append(f"Give every nugget an importance (vital or okay); missing on nugget {numbers}.")
    if len(nuggets) > cap:
        problems.append(f"At most {cap} nuggets may be submitted; the list has {len(nuggets)}.")
    return problems


def moved_order(order: Sequence[int], *, nugget_id: int, to_index: int) -> list[int]:
    """The id order after moving one nugget to `to_index` (clamped to the list)."""
    if nugget_id not in order:
        raise InvalidOperation("That nugget is not in this list.")
    rest = [i for i in order if i != nugget_id]
    index = max(0, min(to_index, len(rest)))
    return rest[:index] + [nugget_id] + rest[index:]


# --- Lineage ----------------------------------------------------------------


@dataclass
class LineageSummary:
    """What became of the drafts in a post-edited list.

    Draft counts may overlap (a draft split in two whose halves are then merged
    elsewhere is both split and merged); `deleted` counts drafts nothing came from.
    """

    drafts: int = 0
    kept: int = 0
    reworded: int = 0
    merged: int = 0
    split: int = 0
    deleted: int = 0
    added: int = 0
    final: int = 0
    final_by_origin: dict[str, int] = field(default_factory=dict)
    # draft id -> positions (0-based) of the final nuggets that came from it
    descendants: dict[int, list[int]] = field(default_factory=dict)


def lineage_summarize(*, draft_ids: Sequence[int], finals: Sequence[tuple[int, str, Sequence[int]]]) -> LineageSummary:
    """Summarize lineage; `finals` are (position, origin, ids of the drafts it derives from)."""
    summary = LineageSummary(drafts=len(draft_ids), final=len(finals))
    drafts_by_origin: dict[str, set[int]] = {KEPT: set(), REWORDED: set(), MERGED: set(), SPLIT: set()}
    descendants: dict[int, list[int]] = {draft_id: [] for draft_id in draft_ids}
    for position, origin, derived in finals:
        summary.final_by_origin[origin or ADDED] = summary.final_by_origin.get(origin or ADDED, 0) + 1
        if origin == ADDED or not origin:
            summary.added += 1
        for draft_id in derived:
            if draft_id in descendants:
                descendants[draft_id].append(position)
                if origin in drafts_by_origin:
                    drafts_by_origin[origin].add(draft_id)
    summary.kept = len(drafts_by_origin[KEPT])
    summary.reworded = len(drafts_by_origin[REWORDED])
    summary.merged = len(drafts_by_origin[MERGED])
    summary.split = len(drafts_by_origin[SPLIT])
    summary.deleted = sum(1 for positions in descendants.values() if not positions)
    summary.descendants = descendants
    return summary


def condition_average_seconds(rows: Iterable[tuple[str, float]]) -> dict[str, tuple[int, float]]:
    """Per condition: (number of topics, mean active seconds per topic), from (condition, seconds) rows."""
    totals: dict[str, list[float]] = {}
    for condition, seconds in rows:
        totals.setdefault(condition, []).append(seconds)
    return {condition: (len(values), sum(values) / len(values)) for condition, values in sorted(totals.items())}


# --- Question banks ---------------------------------------------------------

# A bank's question: at most this many gold answers, each citing at most this many documents.
MAX_ANSWERS = 10
MAX_ANSWER_DOCUMENTS = 20


def answers_of_merge(answer_lists: Iterable[Sequence[dict]]) -> list[dict]:
    """The answers of merged questions: all of them in order; an answer text met again adds its documents."""
    merged: dict[str, dict] = {}
    for answers in answer_lists:
        for answer in answers:
            kept = merged.setdefault(answer["text"], {"text": answer["text"], "documents": []})
            kept["documents"].extend(doc for doc in answer["documents"] if doc not in kept["documents"])
    if len(merged) > MAX_ANSWERS:
        raise CapReached(f"A question holds at most {MAX_ANSWERS} answers; the merge would give it {len(merged)}.")
    return list(merged.values())


def documents_clean(documents: Iterable[str], *, known: Iterable[str]) -> list[str]:
    """An answer's supporting documents, each once, in the order given; every one among the topic's documents."""
    chosen: list[str] = []
    for doc in documents:
        doc = doc.strip()
        if doc and doc not in chosen:
            chosen.append(doc)
    if len(chosen) > MAX_ANSWER_DOCUMENTS:
        raise InvalidOperation(f"An answer cites at most {MAX_ANSWER_DOCUMENTS} documents (this one {len(chosen)}).")
    unknown = [doc for doc in chosen if doc not in set(known)]
    if unknown:
        raise InvalidOperation(f"Not among this topic's documents: {', '.join(unknown)}.")
    return chosen


def bank_submit_problems(*, questions: Sequence[tuple[int, str, int]], cap: int) -> list[str]:
    """What stops a bank from being submitted; `questions` are (position, rule, number of answers).

    Importance is optional in a bank; a question with two answers or more says how they combine.
    """
    problems = []
    if not questions:
        problems.append("The bank is empty: write at least one question.")
    missing = [position + 1 for position, rule, answers in questions if answers > 1 and rule not in ("or", "and")]
    if missing:
        numbers = ", ".join(str(n) for n in missing)
        problems.append(f"Say how the answers combine (OR or AND) on question {numbers}.")
    if len(questions) > cap:
        problems.append(f"At most {cap} questions may be submitted; the bank has {len(questions)}.")
    return problems
