# The reviewer: the plan (JSON) as its argument, the topic and the draft on
# standard input. It approves when the draft has every planned section.
plan=$1
draft=$(cat)
for s in $(printf '%s' "$plan" | sed -n 's/.*"sections":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' ' '); do
	case "$draft" in
	*"## $s"*) ;;
	*) echo "rejected: section $s missing"; exit 0 ;;
	esac
done
echo "approved: every section of the plan is in the draft ($plan)"
