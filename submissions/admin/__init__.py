"""The maintainers' console (issue 6): every entry with its board, runs and verification state;
bulk actions that call the services; a change page that shows the latest run (metrics at full
precision, per-dataset values, the format report, the judge's progress) and the entry's audit
trail.

Who may do what is `accounts.roles`: a maintainer is a staff user in the Maintainers group.
Every verification move goes through `services.set_verification_status` (which checks it and
writes the audit row with the maintainer as actor), every rerun through its service; the
admin writes no state itself. Provenance (the predictions file and its checksum, the owner,
the benchmark, the computed metrics, the test set a run used) and the workflow fields are
read-only; only the details a board shows beside the result can be corrected, through
`maintenance.update_entry_details`.

The console shows the whole entry, step 2 included, in one place: it reads and drives the
judge through the hooks `judging` installs (`judge.py`), as `judging` sits above this app.
"""

from .entries import SubmissionAdmin
from .runs import EvaluationAdmin
from .snapshots import BoardSnapshotAdmin

__all__ = ["BoardSnapshotAdmin", "EvaluationAdmin", "SubmissionAdmin"]
