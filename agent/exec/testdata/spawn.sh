#!/bin/sh
# Starts a child that would outlive us, reports its pid and waits for it.
sleep 1000 &
echo "$!"
wait
