#!/usr/bin/env bash
# workers.sh: pactum with its default worker pools against `workers: N`
# (one pool of N for every agent) for N in WORKERS_TUNED, for an
# in-process agent (echo), an HTTP agent (a webhook to a Node HTTP echo
# server on loopback) and a process-spawning agent (exec: cat), each at
# one and 32 clients (blocking SendMessage, compare.sh's client). Issue 31:
# the default within 5 % of the best setting, for each kind of agent.
#
# Per round each configuration is started fresh (a new SQLite file, audit
# on), warmed up, and every agent measured at 1 and 32 clients; the
# configurations take turns (the starting one rotates each round). Prints
# one line per measurement (req/s and the server's CPU per request), the
# medians, and per agent and client count the default over the best
# tuned setting.
#
#   bash bench/lib/workers.sh [rounds] [requests]      (defaults: 2, 3000)
#
# or from compare.sh (COMPARE_WORKERS=1). WORKERS_TUNED lists the settings
# (default "16 64 256"); exec agents get a quarter of the requests (a
# process each). WORKERS_PORT_BASE moves the two ports (default 9951:
# pactum, 9952: the HTTP echo server). Every client run has a 5-minute
# timeout; the servers are stopped on exit, error or interrupt.
#
# Needs Go and Node.
set -euo pipefail

rounds=${1:-2}
n=${2:-3000}
tuned=(${WORKERS_TUNED:-16 64 256})
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
port=${WORKERS_PORT_BASE:-9951}
hook_port=$((port + 1))
pid=
hook_pid=
cleanup() {
	for p in $pid $hook_pid; do kill "$p" 2>/dev/null || true; done
	for p in $pid $hook_pid; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$root/bench/lib/node.sh"
port_free "$port" "set WORKERS_PORT_BASE"
port_free "$hook_port" "set WORKERS_PORT_BASE"
go build -o "$work/pactum" "$root/cmd/pactum"
go test -c -o "$work/bench.test" "$root/internal/node"

# The webhook's service: answers each POST with its body, as text.
node -e '
require("http").createServer((q, s) => {
	const b = [];
	q.on("data", (c) => b.push(c));
	q.on("end", () => { s.writeHead(200, { "content-type": "text/plain" }); s.end(Buffer.concat(b)); });
}).listen(+process.argv[1], "127.0.0.1");' "$hook_port" &
hook_pid=$!
wait_port "$hook_port"

# config writes configuration $1 (default, or a number for `workers: N`).
config() {
	{
		printf 'listen: 127.0.0.1:%s\nstore: "sqlite://%s/bench.db"\n' "$port" "$work"
		if [[ $1 != default ]]; then printf 'workers: %s\n' "$1"; fi
		printf 'agents:\n  - {name: echo, type: echo}\n'
		printf '  - name: hook\n    type: webhook\n    webhook: {url: "http://127.0.0.1:%s/", allow_private: true, body: "{{json .Input}}"}\n' "$hook_port"
		printf '  - name: cmd\n    type: exec\n    exec: {command: [cat], input: stdin}\n'
	} >"$work/pactum.yaml"
}

client() {
	PACTUM_BENCH_URL=http://127.0.0.1:$port/agents/$1 "$work/bench.test" -test.run '^$' -test.timeout 5m \
		-test.bench "^BenchmarkSendMessageExternal\$/^clients=$2\$" -test.benchtime "$3x"
}

configs=(default "${tuned[@]}")
count=${#configs[@]}
for round in $(seq "$rounds"); do
	echo "# round $round"
	for i in $(seq 0 $((count - 1))); do
		c=${configs[$(((round - 1 + i) % count))]}
		config "$c"
		rm -f "$work"/bench.db*
		"$work/pactum" serve --config "$work/pactum.yaml" >"$work/pactum.log" 2>&1 &
		pid=$!
		wait_port "$port"
		for a in echo hook cmd; do
			m=$n
			[[ $a == cmd ]] && m=$((n / 4))
			client "$a" 32 $((m / 3)) >/dev/null
			for clients in 1 32; do
				t0=$(cpu_ticks "$pid")
				out=$(client "$a" "$clients" "$m")
				t1=$(cpu_ticks "$pid")
				printf '%s\n' "$out" | awk -v cfg="$c" -v agent="$a" -v us="$(per_request "$t0" "$t1" "$m")" '
				/FAIL|panic/ { print > "/dev/stderr" }
				/^BenchmarkSend/ {
					split($1, f, "="); sub(/-[0-9]+$/, "", f[2])
					for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
					printf "workers=%-8s %-5s clients=%-3s %7.0f req/s  p99 %7.2f ms  cpu %5d us/req\n", cfg, agent, f[2], r, p99, us }' |
					tee -a "$work/results"
			done
		done
		kill "$pid"; wait "$pid" 2>/dev/null || true
		pid=
	done
done

sort -s -k2,2 -k3,3 "$work/results" | awk "$median_awk"'
{ key = $2 " " $3; cfg = $1; r[cfg, key] = r[cfg, key] " " $4; c[cfg, key] = c[cfg, key] " " $10; keys[key] = 1; cfgs[cfg] = 1 }
END {
	print "# medians; default / the best tuned setting"
	for (k in keys) {
		best = 0; bestc = ""
		line = ""
		for (cfg in cfgs) {
			m = median(r[cfg, k])
			line = line sprintf("  %s %.0f", cfg, m)
			if (cfg != "workers=default" && m > best) { best = m; bestc = cfg }
		}
		d = median(r["workers=default", k])
		printf "%-5s %-11s%s   default/best (%s) %5.2fx\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1), line, bestc, (best > 0 ? d / best : 0)
	}
}'
