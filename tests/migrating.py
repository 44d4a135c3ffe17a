"""Running migrations in a test (transactional database): to a target, and back to the latest."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to `targets` ([(app, migration)]); the apps as they were there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest():
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
