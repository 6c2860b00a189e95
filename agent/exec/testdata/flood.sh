#!/bin/sh
# Writes without end.
exec yes flood
