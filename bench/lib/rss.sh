#!/usr/bin/env bash
# rss.sh: issue 15's memory target. Builds pactum and bench/rss, then runs
# `pactum serve` (echo agent, a new SQLite file, audit on, 64 workers, as
# bench/compare.sh configures it) on a free loopback port, sends blocking
# SendMessage requests at 32 clients and prints VmRSS, VmHWM, the Go heap
# and the database size after 1,000 and after 100,000 settled tasks, then
# the ratio (target: at most 1.20x).
#
#   bash bench/lib/rss.sh [counts]      (default counts: 1000,100000)
#
# RSS_SETTLE (default 3s) is the idle time before each reading, RSS_TIMEOUT
# (default 20m) bounds the run; the server is stopped on every exit path.
set -euo pipefail

at=${1:-1000,100000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/pactum" "$root/cmd/pactum"
go build -o "$work/rss" "$root/bench/rss"
"$work/rss" -pactum "$work/pactum" -at "$at" -clients 32 \
	-settle "${RSS_SETTLE:-3s}" -timeout "${RSS_TIMEOUT:-20m}"
