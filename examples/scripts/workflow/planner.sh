#!/bin/sh
# planner.sh is the planner of examples/workflows.yaml: it turns the task
# description into a numbered plan (one item per clause of the task, then
# tests and docs) and lists the paths the task names as the files to
# change. No model: a stand-in that shows a whole run offline.
set -eu
role=planner
. "$(dirname "$0")/handoff.sh"
read_message
if [ -n "$feedback" ]; then retried; exit 0; fi

# One plan item per clause: the task split at sentence ends, semicolons
# and "and then".
items=$(printf '%s\n' "$task" | awk '
	{ gsub(/[.;!?]+[ \t]+|[.;!?]+$|[ \t]+and then[ \t]+/, "\n"); print }' |
	sed 's/^[ \t]*//; s/[ \t]*$//' | awk 'NF')
n=0
plan=
nl='
'
while IFS= read -r item; do
	n=$((n + 1))
	first=$(printf '%s' "$item" | cut -c1 | tr '[:lower:]' '[:upper:]')
	plan="$plan$n. $first$(printf '%s' "$item" | cut -c2-).$nl"
done <<ITEMS
$items
ITEMS
plan="$plan$((n + 1)). Add tests that prove each outcome above, including the failure cases.$nl"
plan="$plan$((n + 2)). Update the documentation that describes the changed behaviour."

# The files to change: the words of the task that look like paths.
files=$(printf '%s\n' "$task" | tr -s ' \t' '\n\n' | tr -d '`"()' | sed 's/[.,;:!?]*$//' |
	grep -E '^[A-Za-z0-9._-]*/[A-Za-z0-9._/-]+$|^[A-Za-z0-9_-]+\.(go|md|yaml|yml|json|sh|sql|ts|js|py)$' |
	awk '!seen[$0]++ { print "- " $0 }' || true)

context="Planned the task as ${step:-the first step}: \"$(printf '%s\n' "$task" | sed -n '1p')\"."
findings="Plan, in order ($((n + 2)) items):$nl$plan"
questions=
recommendations="- code-reviewer: check the change against each numbered item and run the tests.$nl- Keep the change to the plan; anything more is a new task."
emit
