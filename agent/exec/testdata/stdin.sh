#!/bin/sh
# Echoes standard input back after a label.
printf 'got: '
cat
