"""The relevance app's job kind, as stored in `Job.kind`."""

UMBRELA = "umbrela"
