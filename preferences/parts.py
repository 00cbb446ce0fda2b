"""What the preferences app adds to the registry: its label family and PrefNugget's preference job."""

from assessor.registry import JobKind, LabelFamily, register_job_kind, register_label_family
from preferences import llm
from preferences.forms import PreferencesLaunchForm
from preferences.kinds import PREFERENCES, PREFERENCES_FAMILY
from preferences.prompts import PREFERENCE_MUST_DECIDE, PREFERENCE_TIES


def register() -> None:
    register_label_family(LabelFamily(PREFERENCES_FAMILY, "preference source"))
    register_job_kind(
        JobKind(
            kind=PREFERENCES,
            label="Preferences (PrefNugget)",
            command="run_preferences",
            description="An LLM says which of two reports on a topic is better, for PrefNugget's sampled pairs.",
            compute=llm.item_compute,
            store=llm.item_store,
            create=llm.preferences_job_create,
            form=PreferencesLaunchForm,
            prompts=(PREFERENCE_TIES, PREFERENCE_MUST_DECIDE),
        )
    )
