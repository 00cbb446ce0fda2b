from assessor.models.audit import AuditEntry
from assessor.models.batches import LLMBatch, LLMBatchRequest
from assessor.models.campaigns import Campaign, CampaignMember
from assessor.models.collection import (
    Answer,
    AnswerReference,
    Citation,
    Qrel,
    QrelSource,
    Run,
    RunAlias,
    Segment,
    Sentence,
    Topic,
)
from assessor.models.jobs import Job, JobItem, LLMAskInFlight, LLMCall, LLMEndpoint, PromptTemplate
from assessor.models.provenance import ImportBatch, LabelProvenance, Provenance
from assessor.models.scores import KeptAnswerScore, KeptRunScore, KeptSource
from assessor.models.sessions import UserSession
from assessor.models.sources import LabelSource
from assessor.models.uploads import Upload
from assessor.models.work import AssessorWork, WorkEvent, WorkOperation

__all__ = [
    "Answer",
    "AnswerReference",
    "AssessorWork",
    "AuditEntry",
    "Campaign",
    "CampaignMember",
    "Citation",
    "ImportBatch",
    "Job",
    "JobItem",
    "KeptAnswerScore",
    "KeptRunScore",
    "KeptSource",
    "LabelSource",
    "LLMAskInFlight",
    "LLMBatch",
    "LLMBatchRequest",
    "LLMCall",
    "LLMEndpoint",
    "PromptTemplate",
    "LabelProvenance",
    "Provenance",
    "Qrel",
    "QrelSource",
    "Run",
    "RunAlias",
    "Segment",
    "Sentence",
    "Topic",
    "Upload",
    "UserSession",
    "WorkEvent",
    "WorkOperation",
]
