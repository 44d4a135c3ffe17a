"""Shared plumbing used by every app: domain errors, and later the audit log."""
