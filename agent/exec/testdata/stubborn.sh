#!/bin/sh
# Like spawn.sh, but ignores SIGTERM (and so does the child).
trap '' TERM
sleep 1000 &
echo "$!"
wait
