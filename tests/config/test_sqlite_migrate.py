"""`make run`'s first step on a fresh clone: every migration applies to a new SQLite database
(the embedded default), not only to the PostgreSQL the rest of the suite runs on. SQLite
rebuilds a table to add a column and refuses to while a view reads it: 0031 and 0032 added
columns to the board totals, which the rows' view reads, and a fresh `make run` stopped at
"error in view submissions_boardentry: no such table: main.submissions_boardtotals"."""

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_every_migration_applies_to_a_new_sqlite_database(tmp_path):
    database = tmp_path / "podium.sqlite3"
    environment = {**os.environ, "DATABASE_URL": f"sqlite:///{database}"}
    migrated = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert migrated.returncode == 0, migrated.stderr[-3000:]
    with closing(sqlite3.connect(database)) as connection:
        views = {
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'view'")
        }
        assert "submissions_boardentry" in views
        # The view reads the columns the last migrations added to the totals.
        connection.execute("SELECT metric_keys, computed_at FROM submissions_boardentry").fetchall()
        columns = {
            row[1] for row in connection.execute("PRAGMA table_info(submissions_boardtotals)")
        }
        assert {"first_rank", "filled_metrics"} <= columns
