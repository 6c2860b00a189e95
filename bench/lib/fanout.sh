#!/usr/bin/env bash
# fanout.sh: SubscribeToTask fan-out on one pactum node (issue 15). Builds
# pactum and bench/fanout, then runs the tool: FANOUT_STREAMS concurrent
# SubscribeToTask streams (default 10000; JSON-RPC, or HTTP+JSON with the
# tool's -binding rest as an extra argument) spread over FANOUT_TASKS
# exec tasks (default 100) that each stream FANOUT_LINES lines (default 5)
# once every stream is open. It prints the server's RSS idle, with the
# tasks running and with every stream open, memory per stream, the
# client's RSS, and whether every stream received every event of its task
# (checked against the stored tasks); it exits non-zero if one did not,
# or if a task stored fewer lines than its agent wrote. Extra arguments
# reach the tool: -gap 0 -kill-grace 1ms makes lost final lines (the
# exec runtime's bug before it read its output to the end) cheap to show.
#
#   bash bench/lib/fanout.sh            # or source it and call run_fanout
#
# The run is bounded by FANOUT_TIMEOUT (default 5m) and stops the server
# and removes its files however it ends. It needs an open-files limit
# (ulimit -Hn) above the streams plus a few hundred: the tool raises the
# soft limit to the hard one and refuses to start below that.

# run_fanout builds into a temporary directory and runs the tool; extra
# arguments go to the tool (see go run ./bench/fanout -h).
run_fanout() {
	local root work rc
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	work=$(mktemp -d)
	(
		set -e
		go build -o "$work/pactum" "$root/cmd/pactum"
		go build -o "$work/fanout" "$root/bench/fanout"
		"$work/fanout" -pactum "$work/pactum" \
			-streams "${FANOUT_STREAMS:-10000}" -tasks "${FANOUT_TASKS:-100}" \
			-lines "${FANOUT_LINES:-5}" -timeout "${FANOUT_TIMEOUT:-5m}" "$@"
	)
	rc=$?
	rm -rf "$work"
	return "$rc"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	set -euo pipefail
	run_fanout "$@"
fi
