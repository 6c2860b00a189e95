# The writer: a markdown draft on the topic. A topic that asks for "no
# title" gets a draft without one, which breaks the step's contract.
topic=$(cat)
case "$topic" in
*"no title"*) printf 'A draft about %s.\n\n## intro\n\n## body\n' "$topic" ;;
*) printf '# On %s\n\n## intro\n\n## body\n' "$topic" ;;
esac
