"""The values the registry's contracts name, in the lowest layer, so that the registry imports nothing above it.

The models read the registry for what people read of their kinds (`Job.kind_label`), so the registry
sits below them and cannot import them. What its contracts name is therefore either a value defined
here (`Scores`, `PromptText`), which the layers above use and re-export where they always lived, or a
row of the foundation named by what it is (`TopicRow`: an `assessor.models.Topic`).

The rows are `Any` to the type checker, not Protocols: a contract's callable takes them as parameters,
and a parameter typed with a Protocol would refuse every app's function, which takes the model itself
(a function must accept everything its contract may pass). The apps' own signatures name the models,
and the foundation passes the models, so each side is still checked where it is written.
"""

from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

# --- the foundation's rows, named ----------------------------------------------------------------

JobRow: TypeAlias = Any  # assessor.models.Job
JobItemRow: TypeAlias = Any  # assessor.models.JobItem
TopicRow: TypeAlias = Any  # assessor.models.Topic
RunRow: TypeAlias = Any  # assessor.models.Run
WorkRow: TypeAlias = Any  # assessor.models.AssessorWork
LabelSourceRow: TypeAlias = Any  # assessor.models.LabelSource
UserRow: TypeAlias = Any  # django.contrib.auth.models.User, whose module needs the app registry ready
LLMSettings: TypeAlias = Any  # assessor.jobs.llm.client.LLMConfig, read from the settings


class LaunchFormLike(Protocol):
    """What the jobs page asks of a job kind's launch form (assessor.jobs.forms.LaunchForm and its subclasses)."""

    def is_valid(self) -> bool: ...

    def add_error(self, field: str | None, error: Any) -> None: ...

    def selection(self) -> dict: ...


# --- values ---------------------------------------------------------------------------------------


@dataclass
class Scores:
    """A table of per-answer scores, the shape every score source shares (assessor.scoring.scores)."""

    metrics: tuple[str, ...]
    # (run_id, topic_id) -> metric -> value, for the answers that were evaluated
    per_topic: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    # run_id -> metric -> mean over the evaluated topics (a missing answer counts 0)
    run_means: dict[str, dict[str, float]] = field(default_factory=dict)
    topics: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    # (run_id, topic_id) -> (the answer's id, its run's key), where the compute read them for its rows: the kept
    # scores write their rows under them without reading the answers again. Not part of what the scores are.
    answer_keys: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class PromptText:
    """The current text of a prompt a job kind sends; its stored versions: assessor.jobs.llm.prompts."""

    name: str
    system: str  # "" sends no system message
    user: str
    params: tuple[tuple[str, float], ...] = ()  # sampling parameters sent with each call
    # Texts this prompt had before, oldest first: a database that never stored them gets them as
    # versions 1, 2... before the current one, so that version numbers mean the same text everywhere.
    earlier: tuple["PromptText", ...] = ()
