"""The audit trail: who changed an account or deleted an upload, and when."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditEntry(models.Model):
    """One change an organizer made outside the collection's own provenance.

    The actor's name is kept as text too, so that the entry still says who it
    was after the account is gone; `actor` is empty for the command line.
    """

    class Action(models.TextChoices):
        ACCOUNT_CREATE = "account_create", "account created"
        PASSWORD_RESET = "password_reset", "password reset"
        ACCOUNT_DEACTIVATE = "account_deactivate", "account deactivated"
        ACCOUNT_REACTIVATE = "account_reactivate", "account reactivated"
        UPLOAD_DELETE = "upload_delete", "upload deleted"

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=30, choices=Action.choices)
    target = models.CharField(max_length=300)
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name}: {self.get_action_display()} {self.target}"
