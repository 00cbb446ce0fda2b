"""Accounts: organizers add assessors, reset passwords and (de)activate accounts, with an audit trail."""
