# handoff.sh holds what the workflow example's agents share: reading the
# message pactum sends each step and writing a handoff. Each role script
# (planner.sh, code-reviewer.sh, ...) sources it; it is not an agent.
#
# The message on standard input has three top-level blocks, four when the
# run was given arguments (pactum run --arguments):
#
#   # Task
#   <the task description>
#
#   # Arguments
#   <the run's arguments; the block is absent without them>
#
#   # Prior handoffs
#   <the earlier handoffs, or "None: you are the first agent.">
#
#   # Your handoff
#   You are planner, step 1 of 3 of workflow feature. ...
#   Expected heading: ## HANDOFF: planner -> code-reviewer
#   ...
#
# When a handoff failed validation the agent runs again with the same
# message, followed by two more blocks: its rejected answer and what to
# fix (docs/runtimes.md, "An attempt after feedback"):
#
#   # Your previous answer (rejected)
#   <the handoff that failed>
#
#   # What to fix
#   Your previous answer did not meet its contract. ...

# block NAME prints the block under the line "# NAME" of the message,
# without its surrounding blank lines.
block() {
	printf '%s\n' "$input" | awk -v name="$1" '
		$0 == "# Task" || $0 == "# Arguments" || $0 == "# Prior handoffs" || $0 == "# Your handoff" ||
		$0 == "# Your previous answer (rejected)" || $0 == "# What to fix" { on = ($0 == "# " name); next }
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

# read_message reads standard input and sets: input, task, arguments (the
# run's arguments, or empty), prior (empty when this is the first agent),
# heading (the heading to write), step ("step 1 of 3 of workflow feature",
# or empty) and feedback (a retry's "What to fix", or empty).
read_message() {
	input=$(cat)
	context= findings= files= questions= recommendations= tests= security=
	task=$(block 'Task')
	arguments=$(block 'Arguments')
	prior=$(block 'Prior handoffs')
	case $prior in None:*) prior= ;; esac
	feedback=$(block 'What to fix')
	heading=$(block 'Your handoff' | sed -n 's/^Expected heading: //p' | sed -n '1p')
	if [ -z "$heading" ]; then
		# Not a workflow's message: the heading quoted in it, if any.
		heading=$(printf '%s\n' "$input" | quoted_heading)
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

# retried writes the handoff of a retry, answering the feedback.
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
