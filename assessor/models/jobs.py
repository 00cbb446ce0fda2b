"""Background jobs that call an LLM, their work items, and the log of every call."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from assessor.models.scope import CampaignScopedManager, campaign_default
from assessor.registry import registry

PICODOLLARS = 10**12
MICRODOLLAR = Decimal("0.000001")


def dollars(picodollars: int) -> Decimal:
    """A cost in US dollars to the micro-dollar: the one rounding, made where a cost is shown."""
    return (Decimal(picodollars) / PICODOLLARS).quantize(MICRODOLLAR)


def cached_percent(tokens_cached: int, tokens_in: int) -> str:
    """The share of prompt tokens served from the provider's prompt cache, in percent to one decimal (half up)."""
    if not tokens_in:
        return "0.0"
    tenths = (2000 * tokens_cached + tokens_in) // (2 * tokens_in)
    return f"{tenths // 10}.{tenths % 10}"


class PromptTemplate(models.Model):
    """A versioned prompt: a changed text is a new version; results keep theirs."""

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    system = models.TextField()
    user = models.TextField()
    # Sampling parameters sent with every call of this version (temperature, max_tokens, top_p...).
    params = models.JSONField(default=dict, blank=True)
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="prompt_version_once"),
            models.UniqueConstraint(fields=["name", "sha256"], name="prompt_text_once"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class Job(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"  # finished, with items that failed
        CANCELLED = "cancelled"

    class Mode(models.TextChoices):
        LIVE = "live"
        BATCH = "batch"

    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+"
    )
    # A kind an app declares (assessor.registry.JobKind); the foundation knows none of them.
    kind = models.CharField(max_length=50)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED, db_index=True)
    # What was asked: topics, runs, nugget set, qrels source, options.
    params = models.JSONField(default=dict, blank=True)
    # The name of what the job produces (a nugget set, assigner, support method or qrels source).
    output_name = models.CharField(max_length=100)
    # Where that name lives: the label family of the source it claims ("nuggets", "qrels"...), or the job's kind
    # when its output is no label source (a Crucible run). With the name, it identifies the output.
    output_family = models.CharField(max_length=50, blank=True)
    # False for a job that adds to an output another job owns (labelling stale nuggets again under its name).
    owns_output = models.BooleanField(default=True)
    model = models.CharField(max_length=200)
    # The named endpoint (settings or LLMEndpoint) whose server, key, limit and prices the calls use.
    endpoint_name = models.CharField(max_length=50, default="default")
    # The OpenAI-compatible endpoint the calls went to (empty: the provider's default).
    endpoint = models.CharField(max_length=500, blank=True)
    # Live: each call is sent as it is asked. Batch: the calls go in the provider's batches (assessor.jobs.batch).
    mode = models.CharField(max_length=5, choices=Mode.choices, default=Mode.LIVE)
    # In batch mode, how an answer that cannot be used is asked again: in the next round's batch, or at once, live.
    batch_reasks = models.CharField(max_length=5, choices=Mode.choices, default=Mode.BATCH)
    prompt_versions = models.JSONField(default=dict, blank=True)
    total_items = models.PositiveIntegerField(default=0)
    done_items = models.PositiveIntegerField(default=0)
    failed_items = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    # Of tokens_in, those the provider served from its prompt cache (priced at the endpoint's cached rate).
    tokens_cached = models.PositiveBigIntegerField(default=0)
    # In pico-dollars (10^-12 $): a call's cost is exact at any price of six decimals per million tokens, so the
    # job's sum is exact on every database and rounded once, when shown.
    cost_picodollars = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = CampaignScopedManager["Job"]()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One job owns an output: of two launches of one name at once, the database lets one in
            # (assessor.jobs.engine). A cancelled job gives its name back; resuming it claims it again.
            models.UniqueConstraint(
                fields=["campaign", "output_family", "output_name"],
                condition=Q(owns_output=True) & ~Q(status="cancelled"),
                name="one_job_per_output",
            )
        ]

    def __str__(self) -> str:
        return f"job {self.pk} {self.kind} {self.output_name}"

    @property
    def kind_label(self) -> str:
        return registry.job_label(self.kind)

    @property
    def cost(self) -> Decimal:
        return dollars(self.cost_picodollars)

    @property
    def cached_percent(self) -> str:
        return cached_percent(self.tokens_cached, self.tokens_in)


class JobItem(models.Model):
    """One unit of a job's work (a topic, an answer's batch, a sentence), claimed atomically."""

    class Status(models.TextChoices):
        PENDING = "pending"
        CLAIMED = "claimed"
        DONE = "done"
        FAILED = "failed"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=200)
    payload = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    claimed_by = models.CharField(max_length=200, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    raw_response = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job_id", "id"]
        constraints = [models.UniqueConstraint(fields=["job", "key"], name="job_item_once")]
        # With the id: a worker claims a job's first pending item (`_next_item_claimed`) from the index alone.
        indexes = [models.Index(fields=["job", "status", "id"], name="job_item_status")]

    def __str__(self) -> str:
        return f"{self.job_id}:{self.key} ({self.status})"


class LLMCall(models.Model):
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.CASCADE, related_name="llm_calls")
    item = models.ForeignKey(JobItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_calls")
    prompt = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="calls")
    model = models.CharField(max_length=200)
    messages = models.JSONField()
    raw_response = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    # Of tokens_in, those the provider reported served from its prompt cache (usage.prompt_tokens_details).
    tokens_cached = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    cost_picodollars = models.PositiveBigIntegerField(default=0)  # exact, as the job's
    # The request reached the endpoint (answered with any status, or timed out waiting): a call paid. False: it
    # could not be sent (no connection), logged with its error but no call.
    reached = models.BooleanField(default=True)
    # Model, prompt version and messages: a cached answer is reused instead of a new call.
    cache_key = models.CharField(max_length=64, db_index=True)
    from_cache = models.BooleanField(default=False)
    parsed_ok = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    @property
    def cost(self) -> Decimal:
        return dollars(self.cost_picodollars)


class LLMSlot(models.Model):
    """One of an endpoint's `concurrency` slots of the database-row semaphore.

    Used when the broker is not Redis: a process holds a slot while its request
    is in flight; a slot whose lease ran out (its holder died) is free again.
    Each endpoint has its own pool of slots, so one endpoint's limit never
    holds back another's.
    """

    pool = models.CharField(max_length=16)
    number = models.PositiveIntegerField()
    holder = models.CharField(max_length=100, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pool", "number"]
        constraints = [models.UniqueConstraint(fields=["pool", "number"], name="llm_slot_once_per_pool")]


class LLMEndpoint(models.Model):
    """An LLM endpoint an organizer added on the pages (others are in the settings).

    The key is never stored: `api_key_env` names the environment variable of
    the web and worker processes that holds it.
    """

    name = models.SlugField(max_length=50, unique=True)
    base_url = models.URLField(max_length=500, blank=True, help_text="Empty: api.openai.com.")
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="The NAME of the environment variable holding the key (not the key)."
    )
    model = models.CharField(max_length=200)
    api_version = models.CharField(max_length=50, blank=True, help_text="Azure OpenAI only.")
    concurrency = models.PositiveIntegerField(default=8)
    price_input = models.FloatField(default=0.0, help_text="US dollars per million input tokens.")
    price_output = models.FloatField(default=0.0, help_text="US dollars per million output tokens.")
    price_cached_input = models.FloatField(
        null=True,
        blank=True,
        help_text="US dollars per million cached input tokens. Empty: the input price (no discount known).",
    )
    temperature = models.FloatField(default=0.0)
    timeout = models.FloatField(default=60.0, help_text="Seconds per call.")
    batch = models.BooleanField(
        default=False, help_text="It offers the batch interface (files and batches): jobs may run in batch mode."
    )
    batch_price_factor = models.FloatField(
        default=0.5, help_text="A batch's calls cost this factor of the prices (0.5: half price)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"


class LLMAskInFlight(models.Model):
    """An ask being sent now, by its cache key: an identical ask waits for its answer instead of paying again.

    The holder renews its lease before each request; the claim of a holder that
    died frees itself when the lease runs out.
    """

    cache_key = models.CharField(max_length=64, unique=True)
    holder = models.CharField(max_length=100)
    lease_until = models.DateTimeField()
