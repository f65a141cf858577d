#!/usr/bin/env bash
# Cost at scale: dynamo with 1,000 … 1,000,000 generated resources against a
# loopback origin (see bench/scale/main.go for what is measured).
#
#   bash bench/scale.sh                          # every size
#   SIZES=1000,10000,100000 bash bench/scale.sh  # fewer
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-1000,10000,100000,1000000}
tmp=$(mktemp -d /tmp/dynamo-scale-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dynamo" ./cmd/dynamo
go run ./bench/scale --dynamo "$tmp/dynamo" --sizes "$SIZES" --dir "$tmp/work" "$@"
echo "scheduler operations (the poller's queue):"
go test -run '^$' -bench 'BenchmarkQueue' -benchtime 2s ./poller | grep Benchmark
