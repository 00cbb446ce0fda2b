"""The reports app's kinds, as stored in the foundation's string columns.

`ImportBatch.kind` and `Upload.kind` hold these values; the labels people read
are registered in `reports.parts`.
"""

IMPORT_REQUESTS = "report_requests"  # a file: AutoJudge report requests (JSONL)
IMPORT_REPORTS = "reports"  # a file: reports in the AutoJudge layout (JSONL, one report a line)
