#!/usr/bin/env bash
# fuzz-all.sh runs every fuzz target of the repository, one after the
# other, for FUZZTIME each (default 60s), and fails when one finds a
# crasher (go test writes it under the package's testdata/fuzz/NAME/ to
# replay). The targets are found by name, so a new Fuzz function is
# included without editing this script. It is the nightly-style job: with
# ten targets it takes ten minutes or so.
#
#   scripts/fuzz-all.sh [PATTERN]    only the targets whose name matches PATTERN (grep -E)
set -euo pipefail

cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-60s}
pattern=${1:-.}
fail=0
ran=0
while IFS=: read -r file name; do
	[[ $name =~ $pattern ]] || continue
	pkg=./$(dirname "$file")
	mod=.
	if [[ $pkg == ./contrib/* || $pkg == ./bench/* ]]; then
		# A nested module: run from its own directory (the workspace
		# resolves the root module).
		mod=$(echo "$pkg" | cut -d/ -f1-3)
		pkg=./${pkg#"$mod"}
		pkg=${pkg%/}
		[[ $pkg == . || $pkg == ./ ]] && pkg=.
	fi
	echo "== $name ($file) for $fuzztime"
	ran=$((ran + 1))
	if ! (cd "$mod" && go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg"); then
		echo "fuzz-all: $name failed; the crasher is under $(dirname "$file")/testdata/fuzz/$name/" >&2
		fail=1
	fi
done < <(grep -rHo --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]+' . | sed 's/:func /:/' | sed 's|^\./||' | sort)
echo "fuzz-all: $ran targets, $([[ $fail == 0 ]] && echo "no crashers" || echo "FAILED")"
exit $fail
