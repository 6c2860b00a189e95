#!/bin/sh
# security-reviewer.sh is the security reviewer of examples/workflows.yaml:
# it greps the files the prior handoffs and the task name, and the task and
# handoffs themselves, for obvious secrets (private keys, AWS access keys,
# passwords and tokens written into the code) and reports CLEAN or where
# the findings are, never their values. No model.
set -eu
role=security-reviewer
. "$(dirname "$0")/handoff.sh"
read_message
if [ -n "$feedback" ]; then retried; exit 0; fi
nl='
'

# Each pattern with what it finds; a finding names the place and the kind,
# never the value.
patterns='private key|-----BEGIN [A-Z ]*PRIVATE KEY-----
AWS access key|AKIA[0-9A-Z]{16}
hard-coded password or token|(password|passwd|secret|api_key|apikey|token)[ \t]*[:=][ \t]*["'"'"'][^"'"'"']{6,}'

# scan NAME FILE adds a line to hits for each line of FILE that matches.
scan() {
	while IFS='|' read -r kind re; do
		for n in $(grep -n -i -E -e "$re" "$2" | cut -d: -f1 || true); do
			hits="$hits$1:$n: $kind$nl"
		done
	done <<PATTERNS
$patterns
PATTERNS
}

hits=
scanned=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# The files the prior handoffs list and the paths the task names.
named=$( (listed 'Files Modified'
	printf '%s\n' "$task" | tr -s ' \t' '\n\n' | tr -d '`"()' | sed 's/[.,;:!?]*$//' | grep '/' || true) | awk '!seen[$0]++')
for f in $named; do
	[ -f "$f" ] || continue
	scanned=$((scanned + 1))
	scan "$f" "$f"
done
printf '%s\n' "$task" >"$tmp"
scan 'the task' "$tmp"
printf '%s\n' "$prior" >"$tmp"
scan 'the prior handoffs' "$tmp"

context="Looked for secrets in the task, the prior handoffs and the $scanned existing files they name (${step:-this step})."
if [ -z "$hits" ]; then
	findings="- No private keys, access keys or hard-coded passwords or tokens found."
	security="CLEAN: no secret patterns in the task, the prior handoffs or $scanned files."
	recommendations="- Keep secrets in the environment (\${VAR} in the configuration), never in files."
else
	findings="Possible secrets (place: kind; values not repeated):$nl$(printf '%s' "$hits" | sed 's/^/- /')"
	security="FINDINGS: $(printf '%s' "$hits" | grep -c .) possible secrets; see Findings."
	questions="- Are the values under Findings real secrets? If so, rotate them."
	recommendations="- Move each value to the environment and rotate it."
fi
emit
