"""The REST API (/api/v1/): an interface over the apps' services and selectors (docs/api.md)."""
