"""The meta-evaluation app's kinds, as stored in the foundation's string columns (labels: `metaeval.parts`)."""

IMPORT_SCORES = "scores"  # a file: per-topic scores of another evaluation, to compare with
