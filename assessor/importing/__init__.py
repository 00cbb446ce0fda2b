"""The machinery every import goes through: atomic writes (staged on SQLite), progress, and what an import refreshes."""
