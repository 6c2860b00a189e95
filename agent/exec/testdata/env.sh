#!/bin/sh
# Prints the variables the env test sets, and whether HOME was inherited.
printf '%s|%s|%s' "$GREETING" "$TOKEN" "${HOME-unset}"
