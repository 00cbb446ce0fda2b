"""What each app adds to the shared shell, declared in its `AppConfig.ready()`.

The foundation (`assessor`) knows the collection, the job engine and the
assessors' work; the apps know nuggets, assignment, support, relevance
grades by an LLM and the meta-evaluation. The shell's pages, commands and engine find the apps' parts
here, by kind, and never import an app: a new kind of job or file is one
`register_*` call in the app that owns it.

Registration happens once, while Django starts (every `ready()` runs before
the first request, command or task); the lookups below only read.

The models read this module for their kinds' labels (`job_label`...), so it
imports nothing of the foundation but `assessor.contracts`, which defines what
its contracts name: the values, and the rows by what they are (`TopicRow`).

Protocol families. A campaign uses one protocol family or both (`Campaign.uses`:
"rag", answers judged with nuggets; "reports"); the menu's links, the job kinds,
the topic and run pages' sections and the work pages each belong to one
(`family`), or to every family (EVERY_FAMILY: the foundation's own, a page that
serves both); so do the topics page's columns and the answer page's sections. A part that names none belongs to its registering app's family
(its AppConfig's `protocol_family`, in effect while its `parts.register()` runs:
`app_registering`). Pages ask for the parts of their campaign through one
lookup, `Registry.used_in`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from django import forms
from django.http import HttpResponse

from assessor.contracts import (
    JobItemRow,
    JobRow,
    LabelSourceRow,
    LaunchFormLike,
    LLMSettings,
    PromptText,
    RunRow,
    Scores,
    TopicRow,
    UserRow,
    WorkRow,
)


class RegistryError(LookupError):
    pass


# A part's `family` when it belongs to every protocol family. A part that names none (None) gets the registering
# app's, or every family where the app names none.
EVERY_FAMILY = ""


# --- jobs ---------------------------------------------------------------------------------


class ItemCompute(Protocol):
    def __call__(self, *, job: JobRow, item: JobItemRow, llm: Any) -> Any: ...


class ItemStore(Protocol):
    def __call__(self, *, job: JobRow, item: JobItemRow, result: Any) -> None: ...


# Rows to insert, by model: (the model, its rows as dicts by attribute name, as `assessor.models.rows` takes them).
ItemRowsOut = list[tuple[type, list[dict[str, Any]]]]


class ItemRows(Protocol):
    def __call__(self, *, job: JobRow, item: JobItemRow, result: Any) -> ItemRowsOut | None: ...


@dataclass(frozen=True)
class JobKind:
    """One kind of LLM job: how it is launched, worked item by item, and stored."""

    kind: str  # the value stored in Job.kind, declared by the app that owns it
    label: str  # what people read: "AutoNuggets"
    compute: ItemCompute  # the calls of one item, outside any transaction; returns a result or raises
    store: ItemStore  # the writes of one item's result, inside the transaction that marks it done
    create: Callable[..., JobRow] | None = None  # create(user=, **form.selection()); None: not launched from a page
    form: Callable[..., LaunchFormLike] | None = None  # the launch form's class; its `selection()` feeds `create`
    prompts: tuple[PromptText, ...] = ()  # the current text of each prompt its items send
    command: str = ""  # the management command that launches the same job: "run_auto_nuggets"
    description: str = ""  # one sentence for the jobs page: what the job makes
    # The page of what a job of this kind made (its source's leaderboard, its run, its bank), or None when there is
    # none to show; the jobs pages link it once the job has made something. Read for every row of the jobs list:
    # a query at most.
    output_url: Callable[[JobRow], str | None] | None = None
    family: str | None = None  # its protocol family (the module's docstring); None: the registering app's
    # What `store` writes for an item, as rows to insert, when that is all it writes (None for an item that needs
    # `store`): the engine then writes them in the one statement that marks the item done, where the database
    # allows it (PostgreSQL), instead of a transaction of several round trips.
    rows: ItemRows | None = None
    # The score families whose sources its results feed: only theirs are refreshed when its labels come to count or
    # stop counting (`ScoreFamily.job_scope`); None: every family is asked.
    scored_in: tuple[str, ...] | None = None


# --- files --------------------------------------------------------------------------------


class ScoreRefresh(StrEnum):
    """What an import of a kind of file does to the kept scores, in its own transaction."""

    NONE = "none"  # scores read none of its rows (topics, segments, qrels)
    ALL = "all"  # scores read its rows: every kept score is refreshed
    TOUCHED = "touched"  # its importer says what it wrote (Writes.scores_touch...): sources, topics, answers


@dataclass(frozen=True)
class Importer:
    """A kind of file the upload page accepts, with the service the import command calls."""

    kind: str  # the value stored in ImportBatch.kind and Upload.kind, declared by the app that owns it
    label: str
    function: Callable[..., Any]  # function(path=, user=, replace=, **options) -> ImportResult
    scores: ScoreRefresh = ScoreRefresh.NONE
    # The upload form's fields this kind reads; a field two kinds share is shown once.
    fields: dict[str, Callable[[], forms.Field]] = field(default_factory=dict)
    required: tuple[str, ...] = ()  # the fields this kind cannot do without
    # The service's keyword arguments from the form's cleaned data (beyond path, user and replace).
    options: Callable[[dict[str, Any]], dict[str, Any]] = lambda data: {}

    def arguments(self, chosen: dict[str, Any]) -> dict[str, Any]:
        """The service's keyword arguments beyond path and user, from the options chosen on the upload form."""
        return {"replace": bool(chosen.get("replace")), **self.options(chosen)}


@dataclass(frozen=True)
class Route:
    """A page an app adds under a shared prefix and URL namespace (`collection:` downloads, boards)."""

    route: str
    view: Callable[..., HttpResponse]
    name: str


@dataclass(frozen=True)
class UrlInclude:
    prefix: str  # "nuggets/"
    module: str  # "nuggets.urls"


# The header's group of the pages where organizers give each kind of work and follow it.
WORK_GROUP = "Assessors' work"


@dataclass(frozen=True)
class NavLink:
    """A destination on the organizer's home page.

    Links of one `group` share one entry of the header, which opens on them (the giving pages
    of every kind of work: one row of the header holds only so many links).
    """

    title: str
    text: str
    url_name: str
    order: int
    group: str = ""
    family: str | None = None  # its protocol family (the module's docstring); None: the registering app's


# --- assessors' work ------------------------------------------------------------------------


class WorkGive(Protocol):
    def __call__(self, *, topic: TopicRow, assessor: UserRow, kind: str, by: UserRow | None) -> WorkRow: ...


class WorkProgress(Protocol):
    """(done, total) per work id, for the assessor's queue, in a fixed number of queries."""

    def __call__(self, works: Sequence[WorkRow]) -> dict[int, tuple[int, int]]: ...


class WorkWaiting(Protocol):
    """Why a work cannot be done yet (say, the list it labels against is still open), per waiting work id, in a
    fixed number of queries; a work that is not waiting is absent."""

    def __call__(self, works: Sequence[WorkRow]) -> dict[int, str]: ...


@dataclass(frozen=True)
class WorkPage:
    """Where an assessor does one kind of work (the URL takes the AssessorWork id), and how it is given."""

    kind: str  # the value stored in AssessorWork.kind, declared by the app that owns it
    label: str  # what people read: "ManualNuggets"
    url_name: str
    # How it is given with its defaults: the app's service, which claims the source its labels go into.
    give: WorkGive
    # The queue lists a topic's work by stage: what a later stage depends on comes first
    # (the nugget list before the ManualAssign that labels against it).
    stage: int = 0
    progress: WorkProgress | None = None
    waiting: WorkWaiting | None = None
    unit: str = ""  # what progress counts: "nuggets", "labels", "pairs"
    description: str = ""  # one sentence for the organizer: what the assessor does
    family: str | None = None  # its protocol family (the module's docstring); None: the registering app's


# --- label families -------------------------------------------------------------------------


StudyItem = tuple[int, ...]
TopicItemLabels = dict[str, dict[StudyItem, str]]  # topic id -> item -> label


def study_item_stored(item: StudyItem) -> int | list[int]:
    """The JSON form of an item in a work's `items` (what the judging pages read): one number alone, else a list."""
    return item[0] if len(item) == 1 else list(item)


def study_item_key(stored: int | list[int]) -> StudyItem:
    """An item as a work's `items` field stores it (JSON: a citation id, or a list such as [answer id, nugget id])."""
    if isinstance(stored, list):
        return tuple(int(part) for part in stored)
    return (int(stored),)


class StudyGive(Protocol):
    """Give the topic's sampled items to the independent assessor, blind to the studied sources, into `source`;
    `nugget_set` is what both sources labelled against, when the family names one. Raises WorkError."""

    def __call__(
        self,
        *,
        topic: TopicRow,
        assessor: UserRow,
        by: UserRow | None,
        source: LabelSourceRow,
        blind_to: Sequence[LabelSourceRow],
        items: Sequence[StudyItem],
        nugget_set: str,
    ) -> WorkRow: ...


class StudyLLMJob(Protocol):
    """The family's LLM job over the answers the sampled `items` are about, with the family's prompts. Raises
    JobRequestInvalid or LLMNotConfigured."""

    def __call__(
        self,
        *,
        name: str,
        nugget_set: str,
        topics: list[str],
        answers: list[int],
        items: list[StudyItem],
        user: UserRow | None,
        endpoint: str | None,
        config: LLMSettings | None,
    ) -> JobRow: ...


@dataclass(frozen=True)
class StudyItemShown:
    """What the export says of a sampled item: the answer it is about, and the item in words."""

    answer_id: int
    text: str  # "citation 12 (sentence 3)", "nugget 7"


@dataclass(frozen=True)
class StudyJudging:
    """How the disagreement study (metaeval.studies) has a family's items judged again: by an independent
    assessor given only the sampled items, and by an LLM job of the family. Items are the family's own
    (`LabelFamily.item_labels`)."""

    work_kind: str  # the work the assessor is given, restricted to the sampled items
    compares: str  # what a study of the family compares, in words: "support labels"
    give: StudyGive
    llm_job: StudyLLMJob
    # The items' answers (what an LLM job judges), and how the export shows each item.
    shown: Callable[[Collection[StudyItem]], dict[StudyItem, StudyItemShown]]
    # (source name, items) -> {item: (label, provenance)}: a judge's counted labels on the items, each with the
    # values of assessor.collection.exporting.PROVENANCE_FIELDS, in their order.
    labelled: Callable[[str, Collection[StudyItem]], dict[StudyItem, tuple[str, tuple]]]
    # The items a person can judge (say, not a citation of an empty passage); None: all of them.
    judgeable: Callable[[Collection[StudyItem]], set[StudyItem]] | None = None
    # What both sources labelled against, when the family has it ("nugget list", "question bank"): the study
    # then asks for its name; empty: the family has none.
    nugget_set: str = ""
    # Where the study pages and commands list the family, lowest first.
    order: int = 50


@dataclass(frozen=True)
class LabelFamily:
    """A family of label sources (`LabelSource.family`): the names one kind of label is stored under.

    A family whose sources label items one by one may offer them (`item_labels`) with every label it gives
    (`labels`): the meta-evaluation then sets a second assessor's replicate of one of its sources beside the
    first person and the family's LLM sources, item by item, and compares the two people's scores where the
    score family of the same name keeps them.
    """

    name: str  # the value stored in LabelSource.family: "nuggets", "qrels"
    label: str  # what one source of it is called: "nugget set", "qrels source"
    # (source name, topics or None for all) -> {topic id: {item: label}}, counted labels only; an item is a tuple
    # of ints naming what one label is about, the same in every source of the family.
    item_labels: Callable[[str, Collection[str] | None], TopicItemLabels] | None = None
    # Instead, for a family labelled against nugget lists (nugget assignment): (source name, topics or None, the
    # list's name or "" for all) -> the same; a replicate is compared on the list its work names.
    set_item_labels: Callable[[str, Collection[str] | None, str], TopicItemLabels] | None = None
    labels: tuple[str, ...] = ()  # every label `item_labels` gives, in their order
    study: StudyJudging | None = None  # the family's part in the disagreement study, if it takes part
    # The score family that scores its sources, when it is not the family's namesake ("methods" for "support"):
    # a source's columns there are its name, after the nugget list's name where `set_item_labels` is given.
    score_family: str = ""


# --- scores ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Download:
    label: str
    url: str


@dataclass(frozen=True)
class ScoreSource:
    """One condition or method whose per-answer scores rank the runs."""

    key: Any  # what names it in its family: ("auto_edit", "manual"), "scratch"
    title: str  # "auto_edit nuggets / manual assignment"
    columns: tuple[str, ...]  # how the leaderboards index names it, a cell each
    scores: Callable[..., Scores]  # scores(runs=None | [run ids]); raises LookupError when it has none
    leaderboard_url: str
    leaderboard_label: str
    downloads: tuple[Download, ...] = ()
    # What keeps its scores from being final (open work, running jobs, stale labels), in sentences.
    notes: Callable[[], list[str]] = lambda: []


class ScoresCompute(Protocol):
    """A source's scores from its labels, for the answers in scope (`topics`, `answers`: None for all).

    The metrics of an answer depend on that answer only, so the rows of a scope
    are those of the whole source restricted to it. Raises LookupError when the
    source has no counted label at all. The kept scores read its `metrics` and
    its rows (`per_topic`) only, and keep the runs' sums from the rows: a compute
    may leave `run_means` and `runs` empty.
    """

    def __call__(
        self, *, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None
    ) -> Scores: ...


@dataclass(frozen=True)
class Crosstab:
    """Two sources' labels of the items both labelled, counted by pair of labels (the meta-evaluation's
    confusion matrix and kappa)."""

    labels: tuple[str, ...]  # every label, in its ordinal order
    counts: dict[tuple[str, str], int]  # (the first source's label, the second's) -> items
    total_a: int  # items the first source labelled
    total_b: int


@dataclass(frozen=True)
class ScoreFamily:
    """A family of score sources (the nugget conditions, the support methods), in listing order.

    The foundation keeps every source's scores (assessor.scoring.kept)
    through `compute`, and lists the kept sources; `listed` is the list read
    from the labels (a rebuild, and the organizers' open-work view).
    """

    name: str  # "conditions", "methods": the pages' context lists the sources' keys under it
    title: str
    headers: tuple[str, ...]  # the column titles of `ScoreSource.columns`
    source: Callable[[tuple[str, ...]], ScoreSource]  # the source its columns name
    listed: Callable[[], list[tuple[str, ...]]]  # the columns of every source with counted labels
    compute: ScoresCompute
    # The sources and topics the labels of a job touch: {columns: topics}, for when its status changes.
    job_scope: Callable[[int], dict[tuple[str, ...], set[str]]]
    # The sources whose counted labels a submit or reopening of this work changes (in its topic only).
    work_scope: Callable[[WorkRow], list[tuple[str, ...]]]
    empty: str  # what the index says when the family has no source yet
    order: int
    # The notes (ScoreSource.notes) of many of its sources in a fixed number of queries: the pages listing them.
    notes: Callable[[Sequence[tuple[str, ...]]], dict[tuple[str, ...], list[str]]]
    # The labels two of its sources share (columns a, columns b), where its labels pair up item by item; None:
    # its sources are compared by their scores only.
    crosstab: Callable[[tuple[str, ...], tuple[str, ...]], Crosstab] | None = None
    # Its labels against a support method's of the TREC 2024 family (FS/PS/NS), as two views of one question, on the
    # items both judged: (support method, its own source's columns, whether PS counts as a yes) -> rows the method.
    support_crosstab: Callable[[str, tuple[str, ...], bool], Crosstab] | None = None
    # What the meta-evaluation asks of one of its sources beyond its scores, where the family can say:
    # LookupError, naming the sources that have labels, unless this one has (None: its columns must be listed);
    require: Callable[[tuple[str, ...]], None] | None = None
    # its descriptive statistics, LookupError when it has no label (None: its topics, runs and score rows);
    describe: Callable[[tuple[str, ...]], dict[str, float | int]] | None = None
    # the label source whose labels it scores, as (label family, name);
    label_source: Callable[[tuple[str, ...]], tuple[str, str]] | None = None
    # its scores had each label been replaced by a seeded draw from an LLM's known confusion: a copy whose truth
    # is known, to check calibrated estimates on (metaeval.calibration).
    llm_like: Callable[[tuple[str, ...], int], Scores] | None = None
    # Reads ahead, while a job's last items are still out, what `compute` will read at the job's end, and keeps it in
    # the process for that `compute` (assessor.scoring.kept.scores_prepare_job); returns, by source, the scores of the
    # answers whose rows that read gives as they will be (written ahead for a source not kept yet). None: the end reads
    # it all then.
    job_prepare: Callable[[int], dict[tuple[str, ...], Scores]] | None = None


# --- the collection pages ------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicCount:
    """A column of the topics page: a count per topic id."""

    title: str
    counts: Callable[[], dict[str, int]]
    order: int
    family: str | None = None  # its protocol family (the module's docstring); None: the registering app's


@dataclass(frozen=True)
class TopicPanel:
    """A section an app adds to the topic page: a template and its context."""

    template: str
    context: Callable[[TopicRow], dict[str, Any]]
    order: int
    # The section's heading and its id in the template, for the page's in-page navigation.
    title: str = ""
    anchor: str = ""
    family: str | None = None  # its protocol family (the module's docstring); None: the registering app's


@dataclass(frozen=True)
class RunPanel:
    """A section an app adds to a run's page (who or what made the run...): a template and its context, or
    None where the app has nothing to say of that run."""

    template: str
    context: Callable[[RunRow], dict[str, Any] | None]
    order: int
    family: str | None = None  # its protocol family (the module's docstring); None: the registering app's


@dataclass(frozen=True)
class AnswerPanel:
    """A section an app adds to one answer's page (`collection:answer`): every source's labels of the answer's
    items side by side, each with who made it, and the items two sources label differently marked; or None
    where the app has nothing on that answer. The answer is an `assessor.models.Answer`.

    A context's `tables` (assessor.collection.answer_labels.LabelTable), where it has them, are what the page's
    list of disagreements and its marks on the sentences read; `title` heads the page's section."""

    title: str
    template: str
    context: Callable[[Any], dict[str, Any] | None]
    order: int
    family: str | None = None  # its protocol family (the module's docstring); None: the registering app's


# What a label badge on the topic page is, besides its label: counted (""), provisional (made in open
# work or by a job that has not finished: `assessor.scoring.lifecycle`), or stale (its nugget changed
# since an LLM labelled it). The topic page draws and explains each (assessor.collection.tables).
BADGE_PROVISIONAL = "provisional"
BADGE_STALE = "stale"


@dataclass(frozen=True)
class Badge:
    text: str
    css: str  # the label's colour class: support, fs, ps...
    title: str = ""
    state: str = ""  # "", BADGE_PROVISIONAL or BADGE_STALE


@dataclass(frozen=True)
class BadgeRow:
    caption: str
    badges: list[Badge]


@dataclass(frozen=True)
class AnswerBadges:
    """Labels an app shows with the answers on the topic page, a fixed number of queries for any number."""

    name: str
    # (answer ids) -> {sentence id: badges shown after the sentence}
    sentence_badges: Callable[[Sequence[int]], dict[int, list[Badge]]] | None = None
    # (answer ids) -> {answer id: rows of badges shown under the answer}
    answer_rows: Callable[[Sequence[int]], dict[int, list[BadgeRow]]] | None = None


@dataclass(frozen=True)
class UploadRow:
    """One upload an organizer may delete: its name, what it holds, and what stops its deletion."""

    name: str
    summary: str
    # Empty when it may be deleted; otherwise each reason, for the organizer to read.
    blockers: list[str]


@dataclass(frozen=True)
class Deletable:
    """A kind of upload that can be deleted when nothing depends on it (a qrels source, a score table...).

    `rows` lists every upload of the kind in a fixed number of queries; `delete` removes one
    (inside the caller's transaction, after its blockers were checked again) and says what it removed.
    """

    kind: str
    label: str
    rows: Callable[[], list[UploadRow]]
    delete: Callable[[str], str]
    order: int


# --- the fake LLM server -------------------------------------------------------------------------


class FakeMatch(StrEnum):
    """Where the fake LLM server finds a prompt's marker."""

    SYSTEM_START = "system start"  # the system message starts with it: "You are SupportJudgeLLM"
    SYSTEM_END = "system end"  # it ends with it: DSPy's layouts all start alike, and differ by their objective
    USER_START = "user start"  # there is no system message and the user's starts with it: published prompts


@dataclass(frozen=True)
class FakeAnswer:
    """How the project's fake LLM server (`bench/fake_llm.py`: the tests, the benchmarks and `bin/demo
    --fake-llm`, never a real job) answers one prompt of an app: by a fixed rule a test can work out again."""

    marker: str  # the words that tell the prompt apart, found where `match` says
    answer: Callable[[str], str]  # the prompt's first user message -> the answer's text
    match: FakeMatch = FakeMatch.SYSTEM_START
    # How a server started with --flip (a second "model" that disagrees) turns the answer round; None: it does not.
    flip: Callable[[str], str] | None = None
    # Asked for log-probabilities: (user message, answer) -> the span of the answer whose tokens have the
    # log-probability given, every other token having 0; None: every token has 0.
    logprob_span: Callable[[str, str], tuple[tuple[int, int], float]] | None = None

    def recognises(self, system: str, user: str) -> bool:
        if self.match is FakeMatch.SYSTEM_START:
            return system.startswith(self.marker)
        if self.match is FakeMatch.SYSTEM_END:
            return system.endswith(self.marker)
        return not system and user.startswith(self.marker)


# --- the registry -------------------------------------------------------------------------------


class FamilyUser(Protocol):
    """What the lookups by campaign need of one (assessor.models.Campaign)."""

    def uses(self, family: str) -> bool: ...


class OfFamily(Protocol):
    @property
    def family(self) -> str | None: ...


Part = TypeVar("Part", bound=OfFamily)


@dataclass
class Registry:
    job_kinds: dict[str, JobKind] = field(default_factory=dict)
    prompts: dict[str, PromptText] = field(default_factory=dict)
    importers: dict[str, Importer] = field(default_factory=dict)
    collection_routes: list[Route] = field(default_factory=list)
    url_includes: list[UrlInclude] = field(default_factory=list)
    nav_links: list[NavLink] = field(default_factory=list)
    work_pages: dict[str, WorkPage] = field(default_factory=dict)
    score_families: list[ScoreFamily] = field(default_factory=list)
    topic_counts: list[TopicCount] = field(default_factory=list)
    topic_panels: list[TopicPanel] = field(default_factory=list)
    run_panels: list[RunPanel] = field(default_factory=list)
    answer_panels: list[AnswerPanel] = field(default_factory=list)
    answer_badges: list[AnswerBadges] = field(default_factory=list)
    deletables: dict[str, Deletable] = field(default_factory=dict)
    label_families: dict[str, LabelFamily] = field(default_factory=dict)
    # Per kind of upload: what other apps build on, as {upload name: reasons it must stay}.
    upload_dependents: dict[str, list[Callable[[], dict[str, list[str]]]]] = field(default_factory=dict)
    # Called after the commit of a transaction that renewed a kept source's stamp (its figures changed).
    stamp_listeners: list[Callable[[], None]] = field(default_factory=list)
    fake_answers: list[FakeAnswer] = field(default_factory=list)

    def job_kind(self, kind: str) -> JobKind:
        try:
            return self.job_kinds[kind]
        except KeyError:
            raise RegistryError(f"no app does jobs of kind {kind!r}") from None

    def prompt(self, name: str) -> PromptText:
        try:
            return self.prompts[name]
        except KeyError:
            raise RegistryError(f"no job kind sends a prompt named {name!r}") from None

    def used_in(self, campaign: FamilyUser | None, parts: Iterable[Part]) -> list[Part]:
        """The parts (nav links, job kinds, panels, work pages) of the families `campaign` uses, in their order;
        every part when no campaign is in effect."""
        return [part for part in parts if campaign is None or not part.family or campaign.uses(part.family)]

    def launchable_kinds(self, campaign: FamilyUser | None = None) -> Iterator[JobKind]:
        """The kinds a page launches, those of `campaign`'s families (all: None)."""
        launchable = (job_kind for job_kind in self.job_kinds.values() if job_kind.form is not None)
        return iter(self.used_in(campaign, launchable))

    def importer(self, kind: str) -> Importer:
        try:
            return self.importers[kind]
        except KeyError:
            raise RegistryError(f"no app imports files of kind {kind!r}") from None

    def work_page(self, kind: str) -> WorkPage | None:
        return self.work_pages.get(kind)

    # What people read for a stored kind. A value no app declares any more (its app was removed
    # from the settings) is shown as it is stored, marked unknown, and never breaks a page.

    def job_label(self, kind: str) -> str:
        job_kind = self.job_kinds.get(kind)
        return job_kind.label if job_kind else _unknown(kind)

    def work_label(self, kind: str) -> str:
        page = self.work_pages.get(kind)
        return page.label if page else _unknown(kind)

    def import_label(self, kind: str) -> str:
        importer = self.importers.get(kind)
        return importer.label if importer else _unknown(kind)

    def family_label(self, family: str) -> str:
        label_family = self.label_families.get(family)
        return label_family.label if label_family else _unknown(family)

    def study_judging(self, family: str) -> StudyJudging | None:
        label_family = self.label_families.get(family)
        return label_family.study if label_family else None

    def study_families(self) -> list[str]:
        """The label families whose disagreements a study can have judged again, by their `StudyJudging.order`
        (in registration order where it is the same)."""
        studied = [(family.study.order, name) for name, family in self.label_families.items() if family.study]
        return [name for _order, name in sorted(studied, key=lambda pair: pair[0])]

    def fake_answer(self, system: str, user: str) -> FakeAnswer | None:
        """The rule that answers these messages: a marker at the system message's start goes before one at its
        end, which goes before one at the user message's start."""
        for match in FakeMatch:
            for answer in self.fake_answers:
                if answer.match is match and answer.recognises(system, user):
                    return answer
        return None


def _unknown(value: str) -> str:
    return f"{value} (unknown)"


registry = Registry()

# The protocol family of the app whose parts are being registered (EVERY_FAMILY: none, or it names none).
_registering_family = EVERY_FAMILY


@contextmanager
def app_registering(family: str) -> Iterator[None]:
    """Parts registered in the block that name no family belong to `family` (the app's `protocol_family`)."""
    global _registering_family
    before, _registering_family = _registering_family, family
    try:
        yield
    finally:
        _registering_family = before


def _of_registering_app(part: Part) -> Part:
    if part.family is not None or not _registering_family:
        return part
    return replace(part, family=_registering_family)  # type: ignore[type-var]


def _unique(kind: str, existing: Iterable[str], name: str) -> None:
    if name in existing:
        raise RegistryError(f"{kind} {name!r} is registered twice")


def register_job_kind(job_kind: JobKind) -> None:
    _unique("job kind", registry.job_kinds, job_kind.kind)
    job_kind = _of_registering_app(job_kind)
    registry.job_kinds[job_kind.kind] = job_kind
    for prompt in job_kind.prompts:
        # Two kinds may send the same prompt; two different texts under one name may not.
        if registry.prompts.get(prompt.name, prompt) != prompt:
            raise RegistryError(f"prompt {prompt.name!r} is registered twice with different texts")
        registry.prompts[prompt.name] = prompt


def register_importer(importer: Importer) -> None:
    _unique("importer", registry.importers, importer.kind)
    registry.importers[importer.kind] = importer


def register_collection_routes(*routes: Route) -> None:
    for route in routes:
        _unique("collection page", (r.name for r in registry.collection_routes), route.name)
        registry.collection_routes.append(route)


def register_urls(prefix: str, module: str) -> None:
    _unique("URL prefix", (u.prefix for u in registry.url_includes), prefix)
    registry.url_includes.append(UrlInclude(prefix, module))


def register_nav_link(link: NavLink) -> None:
    registry.nav_links.append(_of_registering_app(link))
    registry.nav_links.sort(key=lambda item: item.order)


def register_work_page(page: WorkPage) -> None:
    _unique("work kind", registry.work_pages, page.kind)
    registry.work_pages[page.kind] = _of_registering_app(page)


def register_label_family(family: LabelFamily) -> None:
    _unique("label family", registry.label_families, family.name)
    registry.label_families[family.name] = family


def register_score_family(family: ScoreFamily) -> None:
    registry.score_families.append(family)
    registry.score_families.sort(key=lambda item: item.order)


def register_topic_count(count: TopicCount) -> None:
    registry.topic_counts.append(_of_registering_app(count))
    registry.topic_counts.sort(key=lambda item: item.order)


def register_deletable(deletable: Deletable) -> None:
    _unique("deletable kind", registry.deletables, deletable.kind)
    registry.deletables[deletable.kind] = deletable
    registry.deletables = dict(sorted(registry.deletables.items(), key=lambda item: item[1].order))


def register_upload_dependents(kind: str, dependents: Callable[[], dict[str, list[str]]]) -> None:
    """An app that builds on uploads of another's kind says which, so that they are not deleted under it."""
    registry.upload_dependents.setdefault(kind, []).append(dependents)


def register_topic_panel(panel: TopicPanel) -> None:
    registry.topic_panels.append(_of_registering_app(panel))
    registry.topic_panels.sort(key=lambda item: item.order)


def register_run_panel(panel: RunPanel) -> None:
    registry.run_panels.append(_of_registering_app(panel))
    registry.run_panels.sort(key=lambda item: item.order)


def register_answer_panel(panel: AnswerPanel) -> None:
    registry.answer_panels.append(_of_registering_app(panel))
    registry.answer_panels.sort(key=lambda item: item.order)


def register_stamp_listener(listener: Callable[[], None]) -> None:
    """An app that keeps what it derives from kept scores hears when a source's stamp changes: after the
    commit, once per refresh (a listener that queues work gathers a burst into one); its error is logged,
    never the writer's."""
    registry.stamp_listeners.append(listener)


def register_answer_badges(badges: AnswerBadges) -> None:
    _unique("answer badges", (b.name for b in registry.answer_badges), badges.name)
    registry.answer_badges.append(badges)


def register_fake_answer(*answers: FakeAnswer) -> None:
    for answer in answers:
        _unique("fake answer marker", (a.marker for a in registry.fake_answers), answer.marker)
        registry.fake_answers.append(answer)
