#!/usr/bin/env bash
# `make run`'s last step: the web server and a django-q2 worker together, in the foreground.
# Ctrl-C (or TERM) stops both; if either exits on its own, the other is stopped too.
# Each runs in its own session, so the terminal's Ctrl-C reaches only this script, whose trap
# stops them in the way each shuts down cleanly: TERM to qcluster's main process (it stops its
# own workers; TERM to all of them at once leaves it waiting forever), TERM to runserver's
# whole group (the autoreloader and its child). TERM rather than INT: a shell that starts us
# in the background has SIGINT ignored, and Python then never turns it into KeyboardInterrupt.
# Whatever still runs after 20 s is killed.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
ADDRESS=${PODIUM_ADDRESS:-127.0.0.1:8000}
worker="" server="" pids=()

stop() {
    trap - INT TERM EXIT
    kill -TERM "$worker" 2>/dev/null || true
    kill -TERM -- "-$server" 2>/dev/null || true
    for _ in $(seq 40); do
        alive=0
        for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
        [[ $alive == 0 ]] && break
        sleep 0.5
    done
    for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop INT TERM EXIT

setsid "$PY" manage.py qcluster &
worker=$!
setsid "$PY" manage.py runserver "$ADDRESS" &
server=$!
pids=("$worker" "$server")
echo "Podium: http://$ADDRESS/ (web server and worker running; Ctrl-C stops both)"

# Return when either process ends (or a signal arrives); the EXIT trap stops the other.
wait -n
