#!/usr/bin/env bash
# Print the path of a Python >= 3.12 (Django 6 needs it), or fail with a message saying so.
# Order: $PYTHON if set, python3.13 / python3.12 / python3 on PATH, then pyenv's installs, newest
# first.
# Each candidate is run, not just found: a pyenv shim can exist yet refuse to run.
set -euo pipefail

works() { "$1" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }

candidates=()
[[ -n "${PYTHON:-}" ]] && candidates+=("$PYTHON")
candidates+=(python3.13 python3.12 python3)
# ls -r: newest first (3.13 before 3.12; fine until 3.100).
while IFS= read -r exe; do
    candidates+=("$exe")
done < <(ls -r "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3.1[2-9] 2>/dev/null)

for candidate in "${candidates[@]}"; do
    if works "$candidate"; then
        command -v "$candidate"
        exit 0
    fi
done

echo "error: Podium needs Python >= 3.12 (Django 6 requires it) with the venv module." >&2
echo "Tried: ${candidates[*]}" >&2
echo "Install one (e.g. 'pyenv install 3.13' or your OS package) or set PYTHON=/path/to/python3.x." >&2
exit 1
