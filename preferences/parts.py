"""What the preferences app adds to the registry: its label family, PrefNugget's preference job, and the
people's preference judging (its pages, how it is given, its progress)."""

from assessor.registry import (
    JobKind,
    LabelFamily,
    NavLink,
    WorkPage,
    register_job_kind,
    register_label_family,
    register_nav_link,
    register_urls,
    register_work_page,
)
from preferences import judging, llm
from preferences.forms import PreferencesLaunchForm
from preferences.kinds import PREFERENCE_WORK, PREFERENCES, PREFERENCES_FAMILY
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
    register_urls("preferences/", "preferences.urls")
    register_work_page(
        WorkPage(
            kind=PREFERENCE_WORK,
            label="Preference judging",
            description="The assessor says, pair by pair, which of two reports answers the request better.",
            url_name="preferences:judge",
            give=judging.preference_work_give,
            stage=3,
            progress=judging.preference_progress,
            unit="pairs",
        )
    )
    register_nav_link(
        NavLink(
            "Preference judging", "give pairs of reports to compare to assessors, follow it", "preferences:organize", 58
        )
    )
