#!/bin/sh
# Prints each argument on its own line.
for a in "$@"; do printf '%s\n' "$a"; done
