"""A batch-mode job's batches at the provider and the requests they carry (assessor.jobs.batch)."""

from django.db import models
from django.utils import timezone

from assessor.models.jobs import Job, JobItem, PromptTemplate


class LLMBatch(models.Model):
    """One batch of a job's round: its input file and the provider's batch, recorded before each step is taken."""

    class State(models.TextChoices):
        # Ours: the requests are chosen; the file is uploaded; the batch is being created (look it up first).
        NEW = "new"
        UPLOADED = "uploaded"
        CREATING = "creating"
        # The provider's.
        VALIDATING = "validating"
        IN_PROGRESS = "in_progress"
        FINALIZING = "finalizing"
        CANCELLING = "cancelling"
        COMPLETED = "completed"
        FAILED = "failed"
        EXPIRED = "expired"
        CANCELLED = "cancelled"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="llm_batches")
    round = models.PositiveIntegerField()
    state = models.CharField(max_length=12, choices=State.choices, default=State.NEW)
    input_file_id = models.CharField(max_length=200, blank=True)
    provider_id = models.CharField(max_length=200, blank=True, db_index=True)
    output_file_id = models.CharField(max_length=200, blank=True)
    error_file_id = models.CharField(max_length=200, blank=True)
    request_total = models.PositiveIntegerField(default=0)
    request_completed = models.PositiveIntegerField(default=0)
    request_failed = models.PositiveIntegerField(default=0)
    # Why the provider failed, expired or cancelled it.
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Its output and error files were read into its requests.
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job_id", "id"]

    def __str__(self) -> str:
        return f"batch {self.pk} of job {self.job_id} ({self.state})"


class LLMBatchRequest(models.Model):
    """One request a batch-mode job's item asked for, and what its batch answered.

    `request_key` names the exact request (the cache key of its messages, re-asks included); `chain_key` the first
    ask of its re-ask chain, under which its usable answer is logged, as the live path logs it.
    """

    class Status(models.TextChoices):
        WANTED = "wanted"  # for the next round's batch
        SENT = "sent"  # in a batch not yet read
        ANSWERED = "answered"
        USED = "used"  # logged as the item's call
        FAILED = "failed"  # refused for good, or failed transiently too many times

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="llm_batch_requests")
    item = models.ForeignKey(JobItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    batch = models.ForeignKey(LLMBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="requests")
    prompt = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="+")
    request_key = models.CharField(max_length=64)
    chain_key = models.CharField(max_length=64)
    messages = models.JSONField()
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WANTED)
    # Times it was sent in a batch (a transient failure sends it again, up to LLM_MAX_RETRIES more).
    attempts = models.PositiveSmallIntegerField(default=0)
    raw_response = models.TextField(blank=True)
    # The whole response body, read again as the live path reads a completion.
    response = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Once used: its tokens and its cost at the batch price (also in the item's LLMCall), for the job's page.
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost_picodollars = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["job_id", "id"]
        constraints = [models.UniqueConstraint(fields=["job", "request_key"], name="batch_request_once_per_job")]
        indexes = [models.Index(fields=["job", "status"])]

    @property
    def custom_id(self) -> str:
        return f"r{self.pk}"
