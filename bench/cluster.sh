#!/usr/bin/env bash
# Several nodes on one PostgreSQL, locally: starts a throwaway PostgreSQL
# (Debian's postgresql package; installed when missing) on a unix socket in
# a temporary directory, builds dynamo, and runs bench/cluster: polls/s
# with 1 and 3 nodes, takeover after a SIGKILL, cached feed req/s on
# PostgreSQL beside Badger.
#
#   bash bench/cluster.sh                    # 2,000 resources, 15 s windows
#   bash bench/cluster.sh --resources 5000
#
# To watch three nodes yourself instead, run with KEEP=1: PostgreSQL stays
# up and the script prints the DSN to put in each node's configuration
# (storage: {driver: postgres, dsn: ...}, node_id: n1, n2, n3).
set -euo pipefail
cd "$(dirname "$0")/.."

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bindir" ]; then
	echo "installing postgresql" >&2
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
	bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi

tmp=$(mktemp -d /tmp/dynamo-cluster-XXXXXX)
chmod 755 "$tmp"
as_pg() { # PostgreSQL refuses to run as root
	if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
mkdir "$tmp/pg"
[ "$(id -u)" = 0 ] && chown nobody "$tmp" "$tmp/pg"
as_pg "$bindir/initdb" -D "$tmp/pg" -A trust -U dynamo >/dev/null
as_pg "$bindir/pg_ctl" -D "$tmp/pg" -l "$tmp/pg.log" -w \
	-o "-c listen_addresses='' -c unix_socket_directories=$tmp -c fsync=off -c synchronous_commit=off -c max_connections=200" start >/dev/null
cleanup() {
	if [ -z "${KEEP:-}" ]; then
		as_pg "$bindir/pg_ctl" -D "$tmp/pg" -m fast -w stop >/dev/null || true
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
dsn="postgres://dynamo@/postgres?host=$tmp"
echo "PostgreSQL: $dsn (fsync off: a benchmark database)" >&2

go build -o "$tmp/dynamo" ./cmd/dynamo
if [ -n "${KEEP:-}" ]; then
	echo "KEEP=1: PostgreSQL stays up; dynamo is $tmp/dynamo; stop with: $bindir/pg_ctl -D $tmp/pg stop" >&2
	exit 0
fi
go run ./bench/cluster --dynamo "$tmp/dynamo" --dsn "$dsn" "$@"
