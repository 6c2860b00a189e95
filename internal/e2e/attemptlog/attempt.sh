#!/bin/sh
# attempt.sh LOG TASK ATTEMPT SECONDS [FILTER...]: one attempt of a task,
# logged.
#
# It first looks up the processes of the task's earlier attempts in LOG
# (process id and start time, so that a reused id does not count) and logs
# those still running on its "start" line; then it runs a child for
# SECONDS, echoes its input (or, given FILTER, runs it on its input) and
# logs its end. Every line carries the time.
log=$1 task=$2 attempt=$3 secs=$4
shift 4
started() { cut -d' ' -f22 "/proc/$1/stat" 2>/dev/null; }
state() { cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null; }
alive=
for ps in $(awk -v t="$task" '($1 == "start" || $1 == "child") && $2 == t { print $4 ":" $5 }' "$log" 2>/dev/null); do
	p=${ps%%:*} s=${ps#*:}
	case $(state "$p") in '' | Z | X) continue ;; esac
	[ "$(started "$p")" = "$s" ] && alive="$alive,$p"
done
echo "start $task $attempt $$ $(started $$) $(date +%s.%N) alive=${alive#,}" >>"$log"
sleep "$secs" &
child=$!
echo "child $task $attempt $child $(started $child) $(date +%s.%N)" >>"$log"
wait $child
if [ $# -gt 0 ]; then "$@"; else cat; fi
echo "end $task $attempt $$ $(started $$) $(date +%s.%N)" >>"$log"
