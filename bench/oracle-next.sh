#!/usr/bin/env bash
# oracle-next.sh: runs the dispatcher's oracle (a2aserver/dispatch_oracle_test.go,
# `go test -run Oracle ./a2aserver/`) against a newer a2a-go, to see whether
# pactum still answers as a2a-go's own transports do before moving to it.
#
# The version to try is in one place, a2aserver/testdata/oracle-next-version.txt
# (e.g. v2.5.0: the module proxy serves a2a-go for exact versions only). The
# work tree (without .git) is copied to a temporary directory, a2a-go is
# upgraded there with `go get`, and the oracle runs there; the repository is
# not touched.
#
#   bash bench/oracle-next.sh
#
# Prints one line:
#   a2a-go VERSION: oracle passes
#   a2a-go VERSION: ORACLE DIFFERS (…), followed by the test's output
#   a2a-go VERSION: not served by the module proxy (…)
#   a2a-go VERSION: could not be fetched (…)
# and exits 0 in every case: a difference is reported, not fatal. It exits
# non-zero only when it cannot run at all (no version file, no go).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version_file="$root/a2aserver/testdata/oracle-next-version.txt"
version=$(tr -d ' \t\r\n' <"$version_file")
if [[ -z "$version" ]]; then
	echo "oracle-next: $version_file is empty" >&2
	exit 1
fi
module=github.com/a2aproject/a2a-go/v2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pactum-oracle-next.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -C "$root" --exclude=./.git --exclude=node_modules -cf - . | tar -C "$tmp" -xf -
cd "$tmp"

current=$(go list -m -f '{{.Version}}' "$module")
if ! out=$(go get "$module@$version" 2>&1); then
	reason=$(grep -m1 -E 'unknown revision|invalid version|not found|no matching versions|403 Forbidden|404|410' <<<"$out" || true)
	if [[ -n "$reason" ]]; then
		echo "a2a-go $version: not served by the module proxy ($reason); nothing to compare"
	else
		echo "a2a-go $version: could not be fetched ($(head -n1 <<<"$out")); nothing to compare"
	fi
	exit 0
fi
got=$(go list -m -f '{{.Version}}' "$module")
if [[ "$got" != "$version" ]]; then
	echo "a2a-go $version: go get left $module at $got; nothing to compare"
	exit 0
fi

if out=$(go test -count=1 -run Oracle ./a2aserver/ 2>&1); then
	echo "a2a-go $version: oracle passes (pactum answers as a2a-go $version does; the module is at $current)"
else
	echo "a2a-go $version: ORACLE DIFFERS (go test -run Oracle ./a2aserver/ fails against $version; the module is at $current)"
	echo "$out"
fi
exit 0
