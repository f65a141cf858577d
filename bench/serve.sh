#!/usr/bin/env bash
# Serving benchmark: `dynamo serve` on a pre-filled store vs nginx serving
# the same RSS bytes from a file, both on loopback, measured with wrk.
#
#   bash bench/serve.sh            # 20 s per run, 64 connections
#   DURATION=5s bash bench/serve.sh
#
# Runs: nginx (static file), bare Go net/http serving the same bytes from
# memory (the ceiling of any Go server here), dynamo cached feed (GET /resources/bench?max=20,
# RSS 2.0, ~20 KB), dynamo 304 (If-None-Match), dynamo uncached keyword query
# over 100k items (a random 5-digit title term per request).
set -euo pipefail

DURATION=${DURATION:-20s}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
DYNAMO_PORT=${DYNAMO_PORT:-18181}
NGINX_PORT=${NGINX_PORT:-18182}
GO_PORT=${GO_PORT:-18183}

cd "$(dirname "$0")/.."
need() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
if ! need wrk || ! need nginx; then
	echo "installing wrk and nginx" >&2
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

tmp=$(mktemp -d /tmp/dynamo-bench-XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "building" >&2
go build -o "$tmp/dynamo" ./cmd/dynamo
go build -o "$tmp/servefill" ./bench/servefill
go build -o "$tmp/staticgo" ./bench/staticgo
echo "filling the store (50 versions of 'bench', 100k items of 'big')" >&2
"$tmp/servefill" -dir "$tmp/data"

cat >"$tmp/dynamo.yaml" <<YAML
listen: "127.0.0.1:$DYNAMO_PORT"
storage:
  path: "$tmp/data"
YAML
"$tmp/dynamo" serve --config "$tmp/dynamo.yaml" --log-level warn >"$tmp/dynamo.out" 2>"$tmp/dynamo.err" &
pids+=($!)
base="http://127.0.0.1:$DYNAMO_PORT"
for _ in $(seq 100); do curl -fs "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$base/readyz" >/dev/null

feed="/resources/bench?max=20"
mkdir -p "$tmp/www"
curl -fs "$base$feed" >"$tmp/www/feed.xml"
size=$(stat -c %s "$tmp/www/feed.xml")
etag=$(curl -fsI "$base$feed" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
chmod -R a+rX "$tmp/www"

cat >"$tmp/nginx.conf" <<NGINX
worker_processes 2;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err warn;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	keepalive_requests 1000000;
	types { application/rss+xml xml; }
	server {
		listen 127.0.0.1:$NGINX_PORT;
		root $tmp/www;
	}
}
NGINX
"$NGINX" -c "$tmp/nginx.conf" -p "$tmp" &
pids+=($!)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$NGINX_PORT/feed.xml" >/dev/null 2>&1 && break; sleep 0.1; done
cmp <(curl -fs "http://127.0.0.1:$NGINX_PORT/feed.xml") "$tmp/www/feed.xml"

"$tmp/staticgo" -listen "127.0.0.1:$GO_PORT" -file "$tmp/www/feed.xml" &
pids+=($!)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$GO_PORT/" >/dev/null 2>&1 && break; sleep 0.1; done

cat >"$tmp/keyword.lua" <<'LUA'
math.randomseed(42)
request = function()
	return wrk.format("GET", string.format("/resources/big?title=%05d&max=20", math.random(0, 99999)))
end
LUA

# run NAME URL [wrk args...]: prints "NAME req/s p50 p99"
run() {
	local name=$1 url=$2
	shift 2
	wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$@" "$url" >"$tmp/$name.wrk"
	local rps p50 p99 errs
	rps=$(awk '/^Requests\/sec/{print $2}' "$tmp/$name.wrk")
	p50=$(awk '$1=="50%"{print $2}' "$tmp/$name.wrk")
	p99=$(awk '$1=="99%"{print $2}' "$tmp/$name.wrk")
	errs=$(awk '/Non-2xx or 3xx/{print $NF}' "$tmp/$name.wrk")
	echo "$name $rps $p50 $p99 ${errs:-0}"
}

echo "feed: $size bytes, ETag $etag; wrk -t$THREADS -c$CONNS -d$DURATION" >&2
results=()
results+=("$(run nginx "http://127.0.0.1:$NGINX_PORT/feed.xml")")
results+=("$(run bare-go "http://127.0.0.1:$GO_PORT/feed.xml")")
results+=("$(run cached "$base$feed")")
results+=("$(run not-modified "$base$feed" -H "If-None-Match: $etag")")
results+=("$(run keyword "$base" -s "$tmp/keyword.lua")")

nginx_rps=$(echo "${results[0]}" | awk '{print $2}')
echo
echo "| run | req/s | p50 | p99 | × nginx | non-2xx/3xx |"
echo "|---|---:|---:|---:|---:|---:|"
for r in "${results[@]}"; do
	set -- $r
	ratio=$(awk -v a="$2" -v b="$nginx_rps" 'BEGIN{printf "%.2f", a/b}')
	echo "| $1 | $2 | $3 | $4 | $ratio | $5 |"
done
echo
echo "feed size: $size bytes; $(nproc) cores shared by wrk, nginx and dynamo; $(go version | awk '{print $3}')"
grep -h -i -E "level=(ERROR|WARN)" "$tmp/dynamo.err" | head -5 >&2 || true
