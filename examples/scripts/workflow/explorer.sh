#!/bin/sh
# explorer.sh is the explorer of examples/workflows.yaml, the first agent
# of the bugfix workflow: it restates the symptom, looks up the paths the
# bug report names and where its distinctive words (flags, identifiers)
# occur under the working directory, without fixing anything. No model.
set -eu
role=explorer
. "$(dirname "$0")/handoff.sh"
read_message
if [ -n "$feedback" ]; then retried; exit 0; fi
nl='
'

words=$(printf '%s\n' "$task" | tr -s ' \t' '\n\n' | tr -d '`"()' | sed 's/[.,;:!?]*$//')
context="Explored the bug report as ${step:-the first step}, without changing anything."
findings="- Symptom as reported: $(printf '%s\n' "$task" | sed -n '1p')"
for f in $(printf '%s\n' "$words" | grep '/' | awk '!seen[$0]++'); do
	if [ -f "$f" ]; then
		files="$files- $f$nl"
		findings="$findings$nl- $f exists ($(wc -l <"$f" | tr -d ' ') lines): the first place to look."
	else
		findings="$findings$nl- $f is named in the report but not found under $(pwd)."
	fi
done
for w in $(printf '%s\n' "$words" | grep -E -e '^--[a-z][a-z-]+$|^[A-Za-z]+[A-Z_][A-Za-z0-9_]*$' | awk '!seen[$0]++'); do
	n=$(grep -r -l -F -e "$w" . 2>/dev/null | wc -l | tr -d ' ')
	findings="$findings$nl- \"$w\" occurs in $n files under $(pwd)."
done
files=${files%"$nl"}
recommendations="- code-reviewer: confirm the root cause in the places above before the fix.$nl- Add a test that reproduces the symptom first."
emit
