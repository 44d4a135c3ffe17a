"""The materialised boards: `recompute_board` is the one writer of `BoardEntry` and of
`BoardBuild` (docs/boards.md); `board_refresh.schedule_board_refresh` is how every change that
moves a board asks for it.

`writer` reads and writes; `values` lays out what each row shows, `placing` ranks the rows
and `rows` builds the tuples the database loads."""

from ..hooks import add_board_listener as add_board_listener  # the name callers know
from .placing import HIGHLIGHTS, category_ranking
from .writer import (
    board_built,
    board_changes,
    category_ratings,
    database_datetime,
    rebuild_board,
    recompute_board,
)

__all__ = [
    "HIGHLIGHTS",
    "add_board_listener",
    "board_built",
    "board_changes",
    "category_ranking",
    "category_ratings",
    "database_datetime",
    "rebuild_board",
    "recompute_board",
]
