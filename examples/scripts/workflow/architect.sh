#!/bin/sh
# architect.sh is the architect of examples/workflows.yaml: it reads every
# prior handoff, names the agents that wrote them, repeats the open
# questions still open and the tests and security they reported, and gives
# the closing verdict. No model.
set -eu
role=architect
. "$(dirname "$0")/handoff.sh"
read_message
if [ -n "$feedback" ]; then retried; exit 0; fi
nl='
'

authors=$(printf '%s\n' "$prior" | sed -n 's/^## HANDOFF: \(.*\) -> .*/\1/p' | tr '\n' ';' | sed 's/;$//; s/;/; /g')
count=$(listed 'Files Modified' | grep -c . || true)
if [ -n "$prior" ]; then
	context="Judged the work of the prior handoffs (from ${authors:-unnamed agents}) as ${step:-this step}."
	findings="- $count files named by the prior handoffs; the change stays within them."
else
	context="First agent: judged the task as stated (${step:-this step})."
	findings="- The task: $(printf '%s\n' "$task" | sed -n '1p')"
fi
t=$(section 'Test Results' | grep -v '^####' || true)
s=$(section 'Security Status' | grep -v '^####' || true)
[ -z "$t" ] || findings="$findings$nl- Tests reported:$nl$(printf '%s\n' "$t" | quote)"
[ -z "$s" ] || findings="$findings$nl- Security reported:$nl$(printf '%s\n' "$s" | quote)"
questions=$(section 'Open Questions' | grep -v -x -e 'None' -e '####.*' || true)
if [ -n "$questions" ]; then
	recommendations="- Answer the open questions before shipping."
else
	recommendations="- No boundary changes needed; ship once the tests pass in CI."
fi
emit
