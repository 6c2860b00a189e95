#!/bin/sh
# Prints a line, waits until the file named by $1 exists, prints another.
echo first
while [ ! -e "$1" ]; do sleep 0.01; done
echo second
