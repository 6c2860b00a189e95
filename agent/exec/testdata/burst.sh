#!/bin/sh
# Reports its pid, waits until the file named by $1 exists, then writes
# lines 1 to $2 at once, the last without a newline, and exits.
echo "$$"
while [ ! -e "$1" ]; do sleep 0.01; done
i=1
while [ "$i" -lt "$2" ]; do
	echo "line $i"
	i=$((i + 1))
done
printf 'line %s' "$2"
