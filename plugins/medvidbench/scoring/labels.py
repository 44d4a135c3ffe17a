"""The next-action class lists (data, not code): shared/spec/medvidbench_labels.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LABELS_FILE = Path(__file__).with_name("data") / "medvidbench_labels.json"
FIXED_LIST_DATASETS = ("AVOS", "CholecT50", "CoPESD")


@dataclass(frozen=True)
class ActionLabels:
    fixed: dict[str, tuple[str, ...]]  # dataset -> class list
    nurvid_by_procedure: dict[str, tuple[str, ...]]  # procedure -> class list, file order
    copesd_legacy: dict[str, str]  # legacy CoPESD name -> current name

    def nurvid_procedure(self, question: str) -> str | None:
        """The first procedure (in file order) whose name occurs in the question.

        File order matters: "Subcutaneous Injection" comes before
        "Subcutaneous Injection Insulin", so the shorter name wins, as officially.
        """
        lowered = question.lower()
        for procedure in self.nurvid_by_procedure:
            if procedure.lower() in lowered:
                return procedure
        return None

    @property
    def nurvid_union(self) -> tuple[str, ...]:
        return tuple(sorted({a for actions in self.nurvid_by_procedure.values() for a in actions}))


@cache
def load_action_labels(path: Path = LABELS_FILE) -> ActionLabels:
    data = json.loads(path.read_text(encoding="utf-8"))
    return ActionLabels(
        fixed={name: tuple(data[name]) for name in FIXED_LIST_DATASETS},
        nurvid_by_procedure={k: tuple(v) for k, v in data["NurViD_by_procedure"].items()},
        copesd_legacy=dict(data["copesd_legacy_to_current"]),
    )
