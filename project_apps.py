"""The project's apps, named once: the settings install them after the foundation (`assessor`).

The foundation names no app; it finds each installed app's `parts.py` while Django
starts (`assessor/apps.py`). The architecture test, the type check and the docs-pages
test read the installed apps, so a new app is added here and nowhere else.
"""

PROJECT_APPS: tuple[str, ...] = (
    "nuggets",
    "assignment",
    "support",
    "relevance",
    "reports",
    "preferences",
    "prefnugget",
    "grades",
    "crucible",
    "argue",
    "metaeval",
    "bench",
    "demo",
)
