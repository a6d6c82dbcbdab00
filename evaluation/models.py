from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import Job, Project, Release
from annotation.text.answers import AnswerRules


def default_stop() -> list[str]:
    """Generation stops at the end of the line, the answer's."""
    return ["\n"]


class ModelSpec(models.Model):
    """A model registered by an admin to score a project's released contrast sets."""

    class Device(models.TextChoices):
        AUTO = "auto"
        CPU = "cpu"
        CUDA = "cuda"

    class Precision(models.TextChoices):
        FP32 = "fp32", "fp32 (full precision)"
        BF16 = "bf16", "bf16 (CUDA)"
        FP16 = "fp16", "fp16 (CUDA)"

    class Scoring(models.TextChoices):
        LOGLIKELIHOOD = "loglikelihood", "log-likelihood of each label (needs prompt log-probs)"
        GENERATION = "generation", "generated text, matched to a label"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="model_specs")
    name = models.CharField(max_length=100)
    # One of the registered kinds (evaluation/runs/kinds.py), checked on registration: a new
    # kind needs no migration.
    kind = models.CharField(max_length=32)
    # A local directory or hub id, or package.module:callable for python models.
    source = models.CharField(max_length=500)
    label_mapping = models.JSONField(default=dict, blank=True)
    # A checkpoint that lacks weights its kind needs (a headless encoder as a classifier) is
    # refused on the worker: transformers would initialise them at random. An admin may allow
    # it for a deliberate baseline (docs/models.md).
    allow_random_weights = models.BooleanField(default=False)
    max_length = models.PositiveIntegerField(default=256)
    batch_size = models.PositiveIntegerField(default=32)
    device = models.CharField(max_length=8, choices=Device.choices, default=Device.AUTO)
    precision = models.CharField(max_length=4, choices=Precision.choices, default=Precision.FP32)
    # Language models (docs/prompting.md). Minimal pairs: the text before a variant when there
    # is a source (not scored; "" is "{source}\n"). Classification and free text: the prompt
    # and verbalizers override the project's ("" and {}: the project's).
    prompt = models.CharField(max_length=4000, default="", blank=True)
    verbalizers = models.JSONField(default=dict, blank=True)
    target_delimiter = models.CharField(max_length=20, default=" ", blank=True)
    few_shot = models.PositiveSmallIntegerField(default=0)
    few_shot_split = models.CharField(max_length=8, default="", blank=True)
    chat_template = models.BooleanField(default=False)
    stop = models.JSONField(default=default_stop, blank=True)
    # The model's own output (minimal pairs) and free-text answers: how they are generated.
    num_beams = models.PositiveSmallIntegerField(default=1)
    max_new_tokens = models.PositiveIntegerField(default=64)
    # Extractive QA (free-text projects): the overlap of windows over long contexts, in tokens,
    # and the longest answer span considered.
    stride = models.PositiveIntegerField(default=128)
    max_answer_tokens = models.PositiveIntegerField(default=30)
    # Served models (docs/models.md): where, how many requests at once, how long to wait for
    # one, how labels are chosen, and the prices per million tokens for the run's cost. The
    # API key is kept encrypted (evaluation/runs/endpoint.py) and never shown.
    base_url = models.CharField(max_length=500, default="", blank=True)
    api_key_encrypted = models.TextField(default="", blank=True)
    concurrency = models.PositiveSmallIntegerField(default=4)
    timeout = models.PositiveIntegerField(default=120)  # seconds per request
    scoring = models.CharField(
        max_length=16, choices=Scoring.choices, default=Scoring.LOGLIKELIHOOD
    )
    price_prompt = models.FloatField(null=True, blank=True)  # per million prompt tokens
    price_completion = models.FloatField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # Whether the spec may make a worker run code, load a local folder or reach any host
    # (docs/security.md): recorded once, when it is made (model_register: its user is staff;
    # an operator's command or code: yes), so that deleting its user changes nothing.
    trusted = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="model_name_unique"),
            models.CheckConstraint(
                condition=Q(max_length__gte=1) & Q(batch_size__gte=1), name="model_sizes_positive"
            ),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1) & Q(concurrency__lte=256) & Q(timeout__gte=1),
                name="model_served_limits",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)


class EvaluationRun(Job):
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="evaluations")
    model = models.ForeignKey(ModelSpec, on_delete=models.PROTECT, related_name="runs")
    split = models.CharField(max_length=8, default="test")
    # Cut into this many shards that any worker may take (evaluation/runs/shards.py).
    shards = models.PositiveSmallIntegerField(default=1)
    # A served model: take the answers earlier runs of the same model got to the same requests
    # (docs/models.md), rather than ask the server again.
    reuse_answers = models.BooleanField(default=True)
    # A served model's outage: while it lasts, what the run does about it; once the run ends,
    # what happened (evaluation/runners/served.py, Outage).
    notice = models.CharField(max_length=300, blank=True)
    examples_per_second = models.FloatField(null=True, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta(Job.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "succeeded", "failed", "cancelled"]),
                name="run_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(done__lte=models.F("total")), name="run_done_le_total"
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.model} on {self.release} ({self.split})"


class RunShard(Job):
    """One part of a sharded run: its contrast sets' predictions, kept here until the run
    merges every shard's once (evaluation/runs/shards.py)."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="shard_jobs")
    index = models.PositiveSmallIntegerField()
    rows = models.JSONField(default=list, blank=True)
    # What its model's kind said of how it got them (a served model's Check), for the merge.
    notes = models.JSONField(default=dict, blank=True)

    class Meta(Job.Meta):
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="run_shard_once"),
            models.CheckConstraint(
                condition=Q(done__lte=models.F("total")), name="run_shard_done_le_total"
            ),
        ]

    def __str__(self) -> str:
        return f"shard {self.index + 1} of run {self.run_id}"


class Prediction(models.Model):
    """One model prediction on one released example. A re-run replaces them."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="predictions")
    # The release's example id (ex-17, p-42 or a published id), which an original and its
    # perturbation may share: the role tells them apart.
    example = models.CharField(max_length=255)
    set_id = models.CharField(max_length=255)
    role = models.CharField(max_length=10)  # original or perturbed
    gold = models.CharField(max_length=100, blank=True)
    label = models.CharField(max_length=100, blank=True)
    # Free-text projects: the gold answers (the prediction is in `output`), EM and F1.
    gold_answers = models.JSONField(default=list, blank=True)
    em = models.FloatField(null=True, blank=True)
    f1 = models.FloatField(null=True, blank=True)
    probabilities = models.JSONField(default=dict, blank=True)
    # Prompted language models on classification: each label's log-likelihood.
    loglikelihoods = models.JSONField(default=dict, blank=True)
    # Language models: the example's log-probability score; on a set's original, the model's
    # own output for the source and its score.
    score = models.FloatField(null=True, blank=True)
    output = models.TextField(blank=True)
    output_score = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "example", "role"], name="prediction_once_per_example"
            )
        ]

    def __str__(self) -> str:
        return f"{self.example}: {self.label}"

    @property
    def correct(self) -> bool:
        """Right label; for a free-text answer, right by the run's consistency rule (F1 above
        0.8, or an exact match: docs/metrics.md)."""
        if self.f1 is not None:
            rule = (self.run.metrics.get("answer_rules") or {}).get("consistency", "f1")
            return AnswerRules(consistency=rule).right(self.em or 0.0, self.f1)
        return self.label == self.gold


class ServedAnswer(models.Model):
    """A served model's answer to one request of a run, stored as it arrives: a run that is
    killed, cancelled or retried asks the server only for what it has not answered."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="answers")
    key = models.CharField(max_length=64)  # the SHA-256 of the request
    value = models.JSONField()  # evaluation/runners/completions.py: Answer.value
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    # Taken from an earlier run of the same model, not asked of the server by this one.
    reused = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key"], name="served_answer_once")]
        indexes = [models.Index(fields=["key"], name="served_answer_key")]

    def __str__(self) -> str:
        return f"answer {self.key[:8]} of run {self.run_id}"


class Analysis(Job):
    """An analysis of a project's released sets or runs (docs/analyses.md), run on the worker like
    an evaluation run. `params` are what was asked; `result` is set once it succeeds."""

    class Kind(models.TextChoices):
        INSTABILITY = "instability"
        ARTIFACTS = "artifacts"
        INOCULATION = "inoculation"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="analyses")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    params = models.JSONField(default=dict)
    result = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta(Job.Meta):
        verbose_name_plural = "analyses"
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["instability", "artifacts", "inoculation"]),
                name="analysis_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(done__lte=models.F("total")), name="analysis_done_le_total"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} analysis {self.pk}"
