"""The preferences app's job kind and label family, as stored in `Job.kind` and `LabelSource.family`."""

PREFERENCES = "preferences"  # the LLM job
PREFERENCES_FAMILY = "preferences"  # the sources preference labels are kept under
PREFERENCE_WORK = "preference_judging"  # a person's preferences on a topic's pairs
IMPORT_PREFERENCES = "preference_checkpoint"  # a file: PrefNugget's preference checkpoint (JSONL)
