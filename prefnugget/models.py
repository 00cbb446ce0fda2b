"""Where each question of an LLM's bank came from.

The bank itself is a nugget set of form questions (nuggets.banks), made by the job; this records, for each
of its questions and each answer that gave it, the call that answered, the batch, and for PrefNugget's
contrastive extraction the pair (winner and loser reports) the call was shown. A question the model gave
again for a later pair has one row per time it was given, the first in processing order first.
"""

from django.db import models


class QuestionOrigin(models.Model):
    nugget = models.ForeignKey("nuggets.Nugget", on_delete=models.CASCADE, related_name="+")
    job = models.ForeignKey("assessor.Job", on_delete=models.PROTECT, related_name="+")
    # The logged call whose answer held the question (a cache hit's log row on a re-run).
    llm_call = models.ForeignKey("assessor.LLMCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    batch = models.PositiveIntegerField(default=0)  # the topic's batch, from 0
    pair = models.PositiveIntegerField(null=True, blank=True)  # the pair's place in the topic's order, from 0
    winner = models.ForeignKey("assessor.Answer", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    loser = models.ForeignKey("assessor.Answer", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    position = models.PositiveSmallIntegerField(default=0)  # the question's place in the answer's kept questions

    class Meta:
        ordering = ["nugget_id", "batch", "pair", "position"]

    def __str__(self) -> str:
        return f"question {self.nugget_id} from job {self.job_id}, batch {self.batch}"
