"""Answer verdicts, the worked example of docs/architecture.md's "Adding a judge": installed by tests/settings.py only."""
