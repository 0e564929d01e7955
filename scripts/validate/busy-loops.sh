# Sourced by the validation scripts: start_busy N starts N processes that
# keep a core busy each, killed when the script exits.
start_busy() {
  busy=()
  for _ in $(seq 1 "$1"); do
    (while :; do :; done) &
    busy+=($!)
  done
  trap 'kill "${busy[@]}" 2>/dev/null || true' EXIT
}
