"""The prefnugget app's job kinds, as stored in `Job.kind`. Their banks go into the nuggets app's label family."""

PREFNUGGET_BANK = "prefnugget_bank"  # contrastive extraction from a preference source's pairs
QUERY_BANK = "query_bank"  # the query-only bank: one call per topic from its request alone
