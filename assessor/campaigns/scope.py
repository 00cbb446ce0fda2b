"""The campaign scope lives with the models it filters (assessor.models.scope); imported here too by name."""

from assessor.models.scope import (
    CampaignRequired,
    CampaignScopedManager,
    campaign_default,
    campaign_first,
    campaign_in_effect,
    campaign_of_row,
    campaign_scope,
    scoped_campaign,
)

__all__ = [
    "CampaignRequired",
    "CampaignScopedManager",
    "campaign_default",
    "campaign_first",
    "campaign_in_effect",
    "campaign_of_row",
    "campaign_scope",
    "scoped_campaign",
]
