"""Who owns a label name: claiming a source before writing under it, and saying who owns it.

Every write of nuggets, labels or grades under a name goes through
`source_claim` first: the first writer makes the source, with its kind and
provenance, and the name is its from then on. People's work cannot write
into an LLM's or a file's source, a job cannot write into people's or a
file's, an import cannot write into people's or an LLM's, and an LLM source
takes only jobs of the same endpoint, model and prompt versions, so that one
name never mixes two judges. The refusal names the owner.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from assessor.importing.base import ImportFailure
from assessor.importing.staging import Writes
from assessor.models import AssessorWork, ImportBatch, Job, LabelSource
from assessor.names import name_problem
from assessor.registry import registry

Kind = LabelSource.Kind


class SourceRefused(ValueError):
    """A write under a name that another kind of source owns; the message says which."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


def source_owner(source: LabelSource) -> str:
    """Who stands behind a source, in words for an organizer."""
    if source.kind == Kind.PERSON:
        works = list(
            AssessorWork.objects.filter(source=source)
            .order_by("topic_id")
            .values_list("assessor__username", "topic_id")[:4]
        )
        if not works:
            return "people's work"
        shown = ", ".join(f"{person} on {topic}" for person, topic in works[:3])
        return f"people's work ({shown}{', ...' if len(works) > 3 else ''})"
    if source.kind == Kind.LLM:
        job = f", job {source.job_id}" if source.job_id else ""
        return f"the LLM {llm_described(source.model, source.endpoint_name)}{job}"
    batch = source.imported_from
    if batch is None:
        return "imported files"
    by = f" by {batch.imported_by}" if batch.imported_by_id else ""
    return f"the file {batch.file_name} (imported{by} on {batch.imported_at:%Y-%m-%d})"


def source_refusal(source: LabelSource, doing: str) -> SourceRefused:
    """The refusal of a write by `doing` (an import, an LLM job...) into a source it does not own."""
    return SourceRefused(
        f"The {source.family_label} name {source.name!r} belongs to {source_owner(source)}: "
        f"{doing} cannot write into it. Choose another name."
    )


DOING = {Kind.PERSON: "an assessor's work", Kind.LLM: "an LLM job", Kind.FILE: "an import"}


def source_claim(
    *,
    family: str,
    name: str,
    kind: str,
    job: Job | None = None,
    batch: ImportBatch | None = None,
    user: User | None = None,
) -> LabelSource:
    """The source of `name` in `family`, made now if new; SourceRefused if another kind owns it.

    An LLM source also refuses a job of another endpoint, model or prompt versions.
    """
    if kind == Kind.LLM and job is None:
        raise ValueError("an LLM source is claimed by a job")
    # The callers check the name where it is typed; this is the last door before the row.
    if problem := name_problem(name):
        raise SourceRefused(f"The {registry.family_label(family)} name: {problem}")
    source = LabelSource.objects.filter(family=family, name=name).first()
    if source is None:
        try:
            with transaction.atomic():
                return LabelSource.objects.create(
                    family=family,
                    name=name,
                    kind=kind,
                    model=job.model if job else "",
                    endpoint_name=job.endpoint_name if job else "",
                    endpoint=job.endpoint if job else "",
                    prompt_versions=dict(job.prompt_versions) if job else {},
                    job=job,
                    imported_from=batch,
                    created_by=user if user is not None and user.is_authenticated else None,
                )
        except IntegrityError:  # made meanwhile by another writer
            source = LabelSource.objects.get(family=family, name=name)
    if source.kind != kind:
        raise source_refusal(source, DOING[Kind(kind)])
    if kind == Kind.LLM and job is not None:
        llm_check(source, model=job.model, endpoint_name=job.endpoint_name, prompt_versions=job.prompt_versions)
    return source


def llm_described(model: str, endpoint_name: str) -> str:
    """'MODEL of the endpoint NAME', leaving out what was not recorded."""
    if not endpoint_name:
        return model
    return f"{model} of the endpoint {endpoint_name!r}" if model else f"the endpoint {endpoint_name!r}"


def llm_check(source: LabelSource, *, model: str, endpoint_name: str, prompt_versions: Mapping[str, Any]) -> None:
    """Refuse a job of another endpoint, model or prompt versions into an LLM source."""
    if source.model != model or source.endpoint_name != endpoint_name:
        job = f" (job {source.job_id})" if source.job_id else ""
        raise SourceRefused(
            f"The {source.family_label} name {source.name!r} holds the labels of the LLM "
            f"{llm_described(source.model, source.endpoint_name)}{job}: a job of "
            f"{llm_described(model, endpoint_name)} cannot write into it. Choose another name."
        )
    if source.prompt_versions and dict(prompt_versions) != source.prompt_versions:
        made = ", ".join(f"{n} v{v}" for n, v in sorted(source.prompt_versions.items()))
        raise SourceRefused(
            f"The {source.family_label} name {source.name!r} was made with the prompts {made}: "
            "a job with other prompt versions cannot write into it. Choose another name."
        )


def source_get(*, family: str, name: str) -> LabelSource | None:
    return LabelSource.objects.filter(family=family, name=name).first()


def sources_of_kind(*, family: str, kind: str) -> list[str]:
    """The names of a family's sources of one kind, sorted."""
    return list(LabelSource.objects.filter(family=family, kind=kind).order_by("name").values_list("name", flat=True))


def import_source_claim(*, writes: Writes, family: str, name: str, user: User | None, path: Path, option: str) -> int:
    """The key of the file source an import writes into; the refusal names the file and the option that named it.

    A new source is written with the import's other rows (`writes`: at the
    switch, where the import stages its writes), so a failed import claims no name.
    """
    if problem := name_problem(name):
        raise ImportFailure(problem, path=path, field=option)
    source = LabelSource.objects.filter(family=family, name=name).first()
    if source is None:
        made = writes.create_one(
            LabelSource(
                family=family,
                name=name,
                kind=Kind.FILE,
                imported_from=writes.batch,
                created_by=user if user is not None and user.is_authenticated else None,
            )
        )
        return made.pk
    if source.kind != Kind.FILE:
        raise ImportFailure(source_refusal(source, DOING[Kind.FILE]).message, path=path, field=option)
    return source.pk
