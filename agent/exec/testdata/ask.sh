#!/bin/sh
# A weather agent that needs a city: it asks for one unless standard input
# names it ("in <city>") and prints n8n-style JSON either way.
input=$(cat)
case $input in
in\ *) printf '{"output": "Sunny %s", "needs_input": false}\n' "$input" ;;
*) printf '{"output": "Which city?", "needs_input": true}\n' ;;
esac
