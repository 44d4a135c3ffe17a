"""Submitting by API token: upload, status and results, the judge step, own submissions."""

urlpatterns: list = []
