# node.sh: what the benchmark scripts share to run `pactum serve` on
# loopback (source it). compare.sh, ab.sh, streamcpu.sh and pg.sh use it.

# port_free fails if something already listens on 127.0.0.1:$1 (another
# run, say, which would be measured instead); $2 is a hint for the message.
port_free() {
	if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
		echo "127.0.0.1:$1 is already in use${2:+ ($2)}" >&2
		return 1
	fi
}

# cpu_ticks prints the user + system CPU time of process $1 in clock
# ticks (/proc/PID/stat); per_request turns two readings $1 and $2 into
# microseconds per request over $3 requests. On a shared host a server's
# CPU per request drifts less than its rate does.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
per_request() { echo $((($2 - $1) * 1000000 / $(getconf CLK_TCK) / $3)); }

# wait_port waits (15 s at most) until something accepts connections on
# 127.0.0.1:$1.
wait_port() {
	for _ in $(seq 150); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}

# echo_config writes to $1 the configuration every benchmark runs pactum
# with: listen on 127.0.0.1:$2, store $3, 64 workers, log level error, the
# echo agent. $4, when given, holds more top-level keys (node: …), $5 more
# entries of agents:.
echo_config() {
	{
		printf 'listen: 127.0.0.1:%s\nstore: "%s"\nworkers: 64\nlog:\n  level: error\n' "$2" "$3"
		if [[ -n ${4:-} ]]; then printf '%s\n' "$4"; fi
		printf 'agents:\n  - name: echo\n    type: echo\n'
		if [[ -n ${5:-} ]]; then printf '%s\n' "$5"; fi
	} >"$1"
}

# checked_agent is compare.sh's "checked" agent, an entry of agents: for
# echo_config's $5: the echo agent with a 3-assertion contract (issue 15
# and 31: within 10 % of echo without one).
checked_agent='  - name: checked
    type: echo
    contract:
      onViolation: fail
      assertions:
        - {type: assert, message: echoes the greeting, check: {type: contains, value: hello}}
        - {type: assert, message: starts with it, check: {type: regex, pattern: "^hello"}}
        - {type: assert, message: answers at once, check: {type: max_duration, max: 1s}}'

# build_then_now builds, in directory $3, `then` (pactum at revision $2 of
# the repository $1, from a worktree at $3/then-src that the caller's
# cleanup removes; or the binary $4 when given) and `now` (the working
# tree's pactum), for the A/B scripts.
build_then_now() {
	if [[ -n ${4:-} ]]; then
		cp "$4" "$3/then"
	else
		git -C "$1" worktree add -q --detach "$3/then-src" "$2"
		(cd "$3/then-src" && go build -o "$3/then" ./cmd/pactum)
	fi
	go build -o "$3/now" "$1/cmd/pactum"
}

# median_awk defines the awk function median(list): the median of the
# numbers in the space-separated list. Put it before a program:
# awk "$median_awk"'{ … }'.
median_awk='function median(list,    v, k, i, j, t) {
	k = split(list, v, " ")
	for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return (k % 2) ? v[(k+1)/2] : (v[k/2] + v[k/2+1]) / 2
}
'
