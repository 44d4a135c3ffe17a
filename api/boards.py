"""Read endpoints: benchmarks and their rankings (JSON and CSV)."""

urlpatterns: list = []
