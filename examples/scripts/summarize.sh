#!/bin/sh
# summarize.sh reads a text on standard input and prints how many words it
# has and its first line. examples/exec.yaml serves it as an agent.
set -eu

input=$(cat)
words=$(printf '%s\n' "$input" | wc -w | tr -d ' ')
first=$(printf '%s\n' "$input" | sed -n '1p')
printf 'words: %s\nfirst line: %s\n' "$words" "$first"
