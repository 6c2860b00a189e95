# The planner: the topic on standard input, a JSON outline on standard output.
topic=$(cat)
printf '{"title": "On %s", "sections": ["intro", "body"]}\n' "$topic"
