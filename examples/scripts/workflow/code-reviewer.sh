#!/bin/sh
# code-reviewer.sh is the code reviewer of examples/workflows.yaml: it
# quotes the findings (the plan) it received, counts the lines of the files
# the earlier handoffs name, and runs a real, cheap check for its Test
# Results: `sh -n` on every script of this directory. No model.
set -eu
role=code-reviewer
. "$(dirname "$0")/handoff.sh"
read_message
if [ -n "$feedback" ]; then retried; exit 0; fi
nl='
'

received=$(section Findings)
if [ -n "$received" ]; then
	context="Reviewed the task against the findings of the prior handoffs (${step:-this step})."
	items=$(printf '%s\n' "$received" | grep -c '^[0-9][0-9]*\. ' || true)
	if [ "$items" -eq 0 ]; then
		findings="Checked the findings handed over, quoted below."
	else
		findings="Checked the $items numbered items handed over; each names an observable outcome."
	fi
	findings="$findings$nl$nl$(printf '%s\n' "$received" | quote)"
else
	context="No prior handoff: reviewed the task as stated (${step:-this step})."
	findings="- The task: $(printf '%s\n' "$task" | sed -n '1p')"
fi

# The files the earlier agents named, with their size where they exist.
for f in $(listed 'Files Modified'); do
	if [ -f "$f" ]; then
		findings="$findings$nl- $f: $(wc -l <"$f" | tr -d ' ') lines"
	else
		findings="$findings$nl- $f: not in $(pwd) yet (to be created)"
	fi
done

# Test Results: the syntax of every script next to this one.
dir=$(dirname "$0")
checked=0
failed=
for f in "$dir"/*.sh; do
	checked=$((checked + 1))
	sh -n "$f" 2>/dev/null || failed="$failed $(basename "$f")"
done
if [ -z "$failed" ]; then
	tests="PASS: sh -n found no syntax errors in $checked scripts under $dir."
else
	tests="FAIL: sh -n found syntax errors in:$failed"
fi

recommendations="- Keep one test per outcome of the plan.$nl- Review the diff again once the change exists."
emit
