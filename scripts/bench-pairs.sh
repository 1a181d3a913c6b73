#!/usr/bin/env bash
# bench-pairs.sh N OLD NEW [ARGS...]: N alternating pairs of
# `OLD bench throughput ARGS --no-ceiling --json` and the same with NEW (two
# tether binaries, e.g. built with `go build -o bin/tether-old ./cmd/tether`
# at two commits), one line a run: workflows/s, start→result p50/p99, CPU
# per workflow of PostgreSQL, of the bench process (server and starters)
# and of the worker processes (% of a core × elapsed ÷ workflows), commits,
# write transactions and WAL bytes per workflow (docs/benchmarks.md).
# NEW_ARGS adds flags to NEW's runs only: with OLD and NEW the same binary,
# NEW_ARGS="--fairness-keys 8 --priority mixed" compares flow control
# unused with flow control in use.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 N OLD-BINARY NEW-BINARY [bench throughput flags...]" >&2
  exit 2
fi
n=$1 old=$2 new=$3
shift 3
read -r -a new_args <<<"${NEW_ARGS:-}"
for _ in $(seq 1 "$n"); do
  for side in old new; do
    bin=$old extra=()
    label=$old
    if [ "$side" = new ]; then
      bin=$new extra=("${new_args[@]}")
      label=$new
      if [ -n "${NEW_ARGS:-}" ]; then label="$(basename "$new") $NEW_ARGS"; fi
    fi
    "$bin" bench throughput "$@" "${extra[@]}" --no-ceiling --json 2>/dev/null | python3 -c '
import json, sys
f = json.load(sys.stdin)["figures"]
per_wf = lambda k: f.get(k, 0) / 100 * f["elapsed_s"] / f["workflows"] * 1000
print("%-48s wf/s %7.1f p50 %6.1f p99 %6.1f cpu ms/wf pg %.2f srv %.2f wrk %.2f commits %.2f wx %.2f wal %.0f" % (
    sys.argv[1][-48:], f["workflows_per_s"], f["start_to_result_p50_ms"], f["start_to_result_p99_ms"],
    per_wf("postgres_cpu_pct"), per_wf("bench_process_cpu_pct"), per_wf("worker_processes_cpu_pct"),
    f["commits_per_workflow"], f["write_xacts_per_workflow"], f["wal_bytes_per_workflow"]), flush=True)
' "$label"
  done
done
