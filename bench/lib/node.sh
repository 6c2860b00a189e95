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

# median_awk defines the awk function median(list): the median of the
# numbers in the space-separated list. Put it before a program:
# awk "$median_awk"'{ … }'.
median_awk='function median(list,    v, k, i, j, t) {
	k = split(list, v, " ")
	for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return (k % 2) ? v[(k+1)/2] : (v[k/2] + v[k/2+1]) / 2
}
'
