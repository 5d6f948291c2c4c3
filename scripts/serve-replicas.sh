#!/usr/bin/env bash
# Runs N tinymlir-gpt2 replicas behind nginx on 127.0.0.1, and stops them.
#
#   scripts/serve-replicas.sh N PORT --model DIR [tinymlir-gpt2 flags...]
#
# nginx listens on PORT; replica k (1..N) on PORT+k, named "replica<k>" in
# each answer's X-Replica header. The script stays in the foreground and
# supervises them (docs/serving.md):
#   - it prints "ready" once every replica's /health answers 200;
#   - a replica that exits (killed, crashed) is started again;
#   - SIGHUP: a rolling restart, one replica at a time (drained with SIGTERM,
#     started again, ready) -- no request is lost;
#   - SIGTERM or SIGINT: every replica drains and nginx finishes what it
#     passes on, then all exit.
# Environment: TINYMLIR_GPT2 (the binary; default: the build's, else PATH),
# NGINX (default: nginx), RUN_DIR (logs and nginx's files; default: a new
# temporary directory, removed at the end).
set -euo pipefail
if (($# < 3)); then
  sed -n '2,19p' "$0" >&2
  exit 2
fi
N=$1 PORT=$2
shift 2
FLAGS=("$@")
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${TINYMLIR_GPT2:-$HERE/../build/tools/tinymlir-gpt2}
[[ -x $BIN ]] || BIN=$(command -v tinymlir-gpt2) || { echo "serve-replicas: no tinymlir-gpt2" >&2; exit 1; }
NGINX=${NGINX:-nginx}
command -v "$NGINX" >/dev/null || { echo "serve-replicas: no nginx (apt-get install nginx-light)" >&2; exit 1; }
if [[ -n ${RUN_DIR:-} ]]; then
  RUN=$RUN_DIR KEEP_RUN=1
  mkdir -p "$RUN"
else
  RUN=$(mktemp -d /tmp/tinymlir-replicas.XXXXXX) KEEP_RUN=0
fi

log() { echo "serve-replicas: $*" >&2; }

# 0 if 127.0.0.1:$1 answers GET $2 with 200.
answers() {
  local status
  { exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&"$fd"
  read -r -t 5 status <&"$fd" || status=
  exec {fd}>&-
  [[ $status == *" 200 "* ]]
}

declare -a PID
start() { # replica $1
  local k=$1
  "$BIN" --serve --host 127.0.0.1 --port $((PORT + k)) --replica "replica$k" \
    --refuse-while-warming-up "${FLAGS[@]}" 2>>"$RUN/replica$k.log" &
  PID[k]=$!
  log "replica$k: pid ${PID[k]} on 127.0.0.1:$((PORT + k))"
}
ready() { # waits for replica $1's /health (200), while it runs
  local k=$1
  until answers $((PORT + k)) /health; do
    if ! kill -0 "${PID[k]}" 2>/dev/null; then
      log "replica$k exited while starting: $(tail -n 3 "$RUN/replica$k.log")"
      return 1
    fi
    sleep 0.2
  done
}

servers=""
for ((k = 1; k <= N; k++)); do
  servers+="        server 127.0.0.1:$((PORT + k)) max_fails=0;"$'\n'
done
template=$(<"$HERE/serving/nginx.conf.template")
template=${template//@RUN@/$RUN}
template=${template//@PORT@/$PORT}
template=${template//@SERVERS@/${servers%$'\n'}}
printf '%s\n' "$template" >"$RUN/nginx.conf"

stopping=0 rolling=0
trap 'stopping=1' TERM INT
trap 'rolling=1' HUP

for ((k = 1; k <= N; k++)); do start "$k"; done
"$NGINX" -p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/nginx-error.log" &
NGINX_PID=$!

shutdown() {
  trap '' TERM INT HUP
  log "stopping: the replicas drain, nginx finishes what it passes on"
  for ((k = 1; k <= N; k++)); do kill -TERM "${PID[k]}" 2>/dev/null || true; done
  for ((k = 1; k <= N; k++)); do wait "${PID[k]}" 2>/dev/null || true; done
  kill -QUIT "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  ((KEEP_RUN)) || rm -rf "$RUN"
  log "stopped"
}
trap shutdown EXIT

for ((k = 1; k <= N; k++)); do ready "$k" || exit 1; done
until answers "$PORT" /live; do
  kill -0 "$NGINX_PID" 2>/dev/null || { log "nginx exited: $(tail -n 3 "$RUN/nginx-error.log")"; exit 1; }
  sleep 0.1
done
log "ready: http://127.0.0.1:$PORT ($N replicas; logs in $RUN)"

while ((!stopping)); do
  if ((rolling)); then
    rolling=0
    log "rolling restart"
    for ((k = 1; k <= N && !stopping; k++)); do
      kill -TERM "${PID[k]}" 2>/dev/null || true
      wait "${PID[k]}" 2>/dev/null || true
      start "$k"
      ready "$k" || true
      log "replica$k restarted and ready"
    done
    log "rolling restart done"
  fi
  for ((k = 1; k <= N && !stopping; k++)); do
    if ! kill -0 "${PID[k]}" 2>/dev/null; then
      code=0
      wait "${PID[k]}" 2>/dev/null || code=$?
      log "replica$k exited ($code): starting it again"
      start "$k"
    fi
  done
  kill -0 "$NGINX_PID" 2>/dev/null || { log "nginx exited: $(tail -n 3 "$RUN/nginx-error.log")"; exit 1; }
  sleep 0.2 &
  wait $! || true
done
