#!/usr/bin/env bash
# `make run`'s last step: the web server, a django-q2 worker, the demo's stand-in LLM judge
# (deterministic verdicts, not a real LLM; PODIUM_STANDIN_PORT, 0 to leave it out) and the
# demo's stand-in model (plays back the demo predictions for a re-run, not a real model;
# PODIUM_STANDIN_MODEL_PORT, 0 to leave it out; PODIUM_DEMO_DIR) and a stand-in for GitHub's
# OAuth endpoints (so "Sign in with GitHub" works without a GitHub app; NOT GitHub;
# PODIUM_STANDIN_GITHUB_PORT, 0 to leave it out, and left out when GITHUB_CLIENT_ID is set: then
# the real GitHub is used, docs/accounts.md) together, in the foreground.
# Ctrl-C (or TERM) stops all; if one exits on its own, the others stop too.
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
# The web server serves here and the worker's emails link here (config/settings/dev.py builds
# PODIUM_SITE_URL from it unless that is set).
export PODIUM_ADDRESS="$ADDRESS"
STANDIN_PORT=${PODIUM_STANDIN_PORT:-0}
MODEL_PORT=${PODIUM_STANDIN_MODEL_PORT:-0}
GITHUB_PORT=${PODIUM_STANDIN_GITHUB_PORT:-0}
DEMO_DIR=${PODIUM_DEMO_DIR:-var/demo}
worker="" server="" judge="" model="" github="" pids=()

stop() {
    trap - INT TERM EXIT
    kill -TERM "$worker" 2>/dev/null || true
    kill -TERM -- "-$server" 2>/dev/null || true
    [[ -n "$judge" ]] && kill -TERM -- "-$judge" 2>/dev/null || true
    [[ -n "$model" ]] && kill -TERM -- "-$model" 2>/dev/null || true
    [[ -n "$github" ]] && kill -TERM -- "-$github" 2>/dev/null || true
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

if [[ "$STANDIN_PORT" != 0 ]]; then
    setsid "$PY" manage.py standin_judge --port "$STANDIN_PORT" --latency 0.05 &
    judge=$!
    pids+=("$judge")
fi
if [[ "$MODEL_PORT" != 0 ]]; then
    setsid "$PY" manage.py standin_model --port "$MODEL_PORT" --demo-dir "$DEMO_DIR" &
    model=$!
    pids+=("$model")
fi
if [[ -n "${GITHUB_CLIENT_ID:-}" ]]; then
    echo "GitHub sign-in: the real GitHub (GITHUB_CLIENT_ID is set; no stand-in)"
elif [[ "$GITHUB_PORT" != 0 ]]; then
    # The stand-in's demo app (public, demo-only credentials), exported to the web server and
    # worker below; PODIUM_GITHUB_URL points allauth's GitHub provider at the stand-in.
    export GITHUB_CLIENT_ID=podium-standin-client
    export GITHUB_CLIENT_SECRET=podium-standin-secret-not-for-production
    export PODIUM_GITHUB_URL="http://127.0.0.1:$GITHUB_PORT"
    setsid "$PY" manage.py standin_github --port "$GITHUB_PORT" \
        --client-id "$GITHUB_CLIENT_ID" --client-secret "$GITHUB_CLIENT_SECRET" &
    github=$!
    pids+=("$github")
fi
setsid "$PY" manage.py qcluster &
worker=$!
setsid "$PY" manage.py runserver "$ADDRESS" &
server=$!
pids+=("$worker" "$server")
echo "Podium: http://$ADDRESS/ (web server, worker and stand-ins running; Ctrl-C stops all)"
if [[ -n "$github" ]]; then
    echo "Sign in with GitHub: a local stand-in at $PODIUM_GITHUB_URL (not GitHub: you type the login)"
fi

# Return when any process ends (or a signal arrives); the EXIT trap stops the others.
wait -n
