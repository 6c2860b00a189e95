# handoff.sh holds what the workflow example's agents share: reading the
# message pactum sends each step and writing a handoff. Each role script
# (planner.sh, code-reviewer.sh, ...) sources it; it is not an agent.
#
# The message on standard input has three top-level blocks:
#
#   # Task
#   <the task description>
#
#   # Prior handoffs
#   <the earlier handoffs, or "None: you are the first agent.">
#
#   # Your handoff
#   You are planner, step 1 of 3 of workflow feature. ...
#   Expected heading: ## HANDOFF: planner -> code-reviewer
#   ...
#
# When a handoff failed validation the agent runs again and its standard
# input is the feedback alone (the problems, quoting the expected heading);
# the whole conversation would be in {{.Transcript}}, which these scripts
# do not need.

# block NAME prints the block under the line "# NAME" of the message,
# without its surrounding blank lines.
block() {
	printf '%s\n' "$input" | awk -v name="$1" '
		$0 == "# Task" || $0 == "# Prior handoffs" || $0 == "# Your handoff" { on = ($0 == "# " name); next }
		on { line[++n] = $0 }
		END {
			first = 1; while (first <= n && line[first] ~ /^[ \t]*$/) first++
			last = n; while (last >= first && line[last] ~ /^[ \t]*$/) last--
			for (i = first; i <= last; i++) print line[i]
		}'
}

# section NAME prints the bodies of every "### NAME" section of the prior
# handoffs (a merged handoff's "#### agent" lines included).
section() {
	printf '%s\n' "$prior" | awk -v name="$1" '
		/^## / { on = 0; next }
		/^### / { on = ($0 == "### " name); next }
		on && $0 !~ /^[ \t]*$/ { print }'
}

# listed NAME prints the list items of the prior handoffs' "### NAME"
# sections, one per line, without markers and backquotes, each once.
listed() {
	section "$1" | sed -n 's/^[ \t]*[-*][ \t]*//p' | tr -d '`' | awk 'NF && !seen[$0]++'
}

# quoted_heading prints the first handoff heading quoted in its input.
quoted_heading() {
	awk '{
		i = index($0, "## HANDOFF: "); if (!i) next
		if (match(substr($0, i), /^## HANDOFF: [A-Za-z0-9._-]+ -> [A-Za-z0-9._-]+(, [A-Za-z0-9._-]+)*/)) {
			print substr($0, i, RLENGTH); exit
		}
	}'
}

# read_message reads standard input and sets: input, task, prior (empty when
# this is the first agent), heading (the heading to write), step ("step 1 of
# 3 of workflow feature", or empty) and feedback (the retry's feedback, or
# empty).
read_message() {
	input=$(cat)
	context= findings= files= questions= recommendations= tests= security=
	task=$(block 'Task')
	prior=$(block 'Prior handoffs')
	case $prior in None:*) prior= ;; esac
	feedback=
	heading=$(printf '%s\n' "$input" | sed -n 's/^Expected heading: //p' | sed -n '1p')
	if [ -z "$heading" ]; then
		# A retry: the feedback quotes the heading it expects. Prefer a
		# line that says so, and on a line the first heading quoted.
		feedback=$input
		heading=$( (printf '%s\n' "$input" | grep -i -E 'expect|want|must' || true
			printf '%s\n' "$input") | quoted_heading)
	fi
	[ -n "$heading" ] || heading="## HANDOFF: $role -> done"
	step=$(printf '%s\n' "$input" | sed -n 's/^You are [^,]*, \(step [0-9]* of [0-9]* of workflow [^.]*\)\..*/\1/p' | sed -n '1p')
}

# emit writes the handoff: the heading, the five required sections (each
# "None" when its variable is empty) and the optional Test Results and
# Security Status when their variables are set.
emit() {
	printf '%s\n' "$heading"
	for s in Context Findings 'Files Modified' 'Open Questions' Recommendations; do
		case $s in
		Context) body=$context ;;
		Findings) body=$findings ;;
		'Files Modified') body=$files ;;
		'Open Questions') body=$questions ;;
		Recommendations) body=$recommendations ;;
		esac
		printf '\n### %s\n%s\n' "$s" "${body:-None}"
	done
	[ -z "${tests:-}" ] || printf '\n### Test Results\n%s\n' "$tests"
	[ -z "${security:-}" ] || printf '\n### Security Status\n%s\n' "$security"
}

# retried writes the handoff of a retry, from the feedback alone.
retried() {
	context="Answering again after feedback on my previous handoff."
	findings=$(printf '%s\n' "$feedback" | sed -n 's/^[ \t]*[-*][ \t]*/- Fixed: /p')
	[ -n "$findings" ] || findings="- The previous handoff was rejected; this one follows the expected heading and sections."
	recommendations="- Continue with the previous handoff's plan."
	emit
}

# quote prefixes every line with "> " so that quoted markdown headings stay
# text.
quote() { sed 's/^/> /'; }
