#!/bin/sh
# Writes 4 KiB of noise and then the reason to stderr, exits with code $1.
echo "partial output"
i=0
while [ "$i" -lt 100 ]; do
	printf 'noise line %03d padding padding padding\n' "$i" >&2
	i=$((i + 1))
done
echo "the real reason" >&2
exit "$1"
