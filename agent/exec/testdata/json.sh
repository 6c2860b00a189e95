#!/bin/sh
# Prints a JSON document like a CLI agent's --json output.
cat <<'JSON'
{"result": {"text": "hello from json", "score": 0.9}, "items": ["a", "b"], "msg": "plain <tag> & more", "n": 7}
JSON
