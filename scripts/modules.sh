#!/usr/bin/env bash
# scripts/modules.sh tests the nested modules (the Watermill adapter, the
# benchmark suite) and the README's steps for using brokerlab from a user's
# own module. .ci/run calls it; run it from anywhere in the clone.
#
#  1. Each nested module resolves the root module from this tree: its go.mod
#     requires github.com/brokerlab/brokerlab with a `replace` to the
#     relative path of the root, so nothing of our own comes from the
#     network (no module proxy serves this module until it is published).
#  2. Through the workspace (go.work): go vet and go test -race. On its own
#     (GOWORK=off): go mod verify, go mod tidy -diff, go vet and go test.
#     Each suite runs once plain and once under the race detector.
#     bench/kafkapeer, outside the workspace, is tested on its own.
#  3. The user-module steps: the README's "Using brokerlab from your own
#     module" section and the adapter README's "Install" section are run
#     verbatim in a fresh module beside a fresh clone of this repository's
#     HEAD, outside this tree, with an empty module cache. The README's Go
#     example is built and run there (it must fail the way the README says),
#     and the adapter's quick start is built there.
#
# MODULES_SKIP_INSTALL=1 skips step 3 (it downloads every dependency again).
set -euo pipefail

ROOT_MODULE=github.com/brokerlab/brokerlab
NESTED_MODULES=(contrib/watermillsim bench)
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO_ROOT"

fail() {
	echo "modules: $*" >&2
	exit 1
}

# relpath prints the path from nested module directory $1 back to the root.
relpath() {
	local up="" part
	IFS=/ read -ra parts <<<"$1"
	for part in "${parts[@]}"; do up="../$up"; done
	echo "${up%/}"
}

for m in "${NESTED_MODULES[@]}"; do
	[ -f "$m/go.mod" ] || fail "$m/go.mod is missing"
	go work edit -json go.work | grep -q "\"DiskPath\": \"./$m\"" || fail "go.work does not use ./$m"
	want=$(relpath "$m")
	got=$(cd "$m" && GOWORK=off go mod edit -json |
		awk -v m="$ROOT_MODULE" '
			/"Old": \{/ { old = 1; next }
			old && /"Path":/ { gsub(/[",]/, "", $2); isroot = ($2 == m); old = 0; next }
			/"New": \{/ { nw = 1; next }
			nw && /"Path":/ { gsub(/[",]/, "", $2); if (isroot) print $2; nw = 0 }')
	[ "$got" = "$want" ] ||
		fail "$m/go.mod must replace $ROOT_MODULE with $want (the root of this tree), found '${got}'; no proxy serves our own commits"
done

# The workspace must not raise a version the root's own packages build
# with: `go test ./...` at the root runs in the workspace, and a user's
# module gets the root's go.mod alone, so the two must agree or the tests
# test other code than users run. A nested module that needs a newer
# version raises it in the root's go.mod too.
echo "== the root builds with the same dependency versions with and without the workspace"
root_deps() {
	go list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | sort -u
}
deps_alone=$(GOWORK=off root_deps)
deps_workspace=$(root_deps)
if [ "$deps_alone" != "$deps_workspace" ]; then
	diff <(echo "$deps_alone") <(echo "$deps_workspace") >&2 || true
	fail "the workspace raises the versions above (< alone, > through go.work): raise them in the root go.mod ('GOWORK=off go get MODULE@VERSION' at the root)"
fi

for m in "${NESTED_MODULES[@]}"; do
	echo "== $m through the workspace (go.work)"
	(cd "$m" && go vet ./... && go test -race ./...)
	echo "== $m on its own (GOWORK=off)"
	(cd "$m" && GOWORK=off go mod verify && GOWORK=off go mod tidy -diff) ||
		fail "$m/go.mod or go.sum is not tidy or does not verify (above): run 'GOWORK=off go mod tidy' in $m"
	(cd "$m" && GOWORK=off go vet ./... && GOWORK=off go test ./...)
done

# bench/kafkapeer measures kfake with franz-go, whose only released
# versions declare go 1.26.0, newer than the workspace's go line allows: it
# is a module of its own outside the workspace, and needs nothing of ours.
echo "== bench/kafkapeer on its own (outside the workspace)"
(cd bench/kafkapeer && GOWORK=off go mod verify && GOWORK=off go mod tidy -diff && GOWORK=off go vet ./... && GOWORK=off go test ./...) ||
	fail "bench/kafkapeer does not verify, tidy, vet or test on its own (above)"

if [ "${MODULES_SKIP_INSTALL:-}" = 1 ]; then
	echo "modules OK (user-module steps skipped)"
	exit 0
fi

# block FILE SECTION N prints the Nth (from 1) fenced block of the given
# language (sh or go) in the section of FILE whose heading is SECTION.
block() {
	awk -v sec="$2" -v n="$3" -v lang="$4" '
		/^#+ / { h = $0; sub(/^#+ /, "", h); in_sec = (h == sec); next }
		in_sec && $0 == "```" lang { k++; if (k == n) { code = 1; next } }
		code && /^```$/ { exit }
		code { print }' "$1"
}

# plain_block FILE SECTION N prints the Nth (from 1) fenced block without
# a language (output shown in the README) in the section of FILE whose
# heading is SECTION; it tells opening fences from closing ones.
plain_block() {
	awk -v sec="$2" -v n="$3" '
		/^#+ / && !open { h = $0; sub(/^#+ /, "", h); in_sec = (h == sec); next }
		/^```/ {
			if (open) { open = 0; if (code) exit; next }
			open = 1
			if (in_sec && $0 == "```" && ++k == n) code = 1
			next
		}
		code { print }' "$1"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/brokerlab-modules.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOMODCACHE="$work/modcache" GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
unset GOWORK
git clone -q "$REPO_ROOT" "$work/brokerlab"

section="Using brokerlab from your own module"
workspace_steps=$(block README.md "$section" 1 sh)
replace_steps=$(block README.md "$section" 2 sh)
example=$(block README.md "Testing your own Go code" 1 go)
example_out1=$(plain_block README.md "Testing your own Go code" 1)
example_out2=$(plain_block README.md "Testing your own Go code" 2)
[ -n "$example_out1" ] && [ -n "$example_out2" ] || fail "README.md: 'Testing your own Go code' needs two plain output blocks after its Go example"
[ -n "$workspace_steps" ] || fail "README.md: no sh block in its '$section' section"
[ -n "$replace_steps" ] || fail "README.md: no second sh block (go mod edit -replace) in its '$section' section"
grep -q '^package ' <<<"$example" || fail "README.md: the first go block of 'Testing your own Go code' is not a whole file"

# new_module NAME makes an empty module $work/NAME beside the clone.
new_module() {
	mkdir -p "$work/$1"
	(cd "$work/$1" && go mod init "example.com/$1" >/dev/null 2>&1)
}

# run_user NAME STEPS runs STEPS, line by line, in the module $work/NAME.
run_user() {
	(
		cd "$work/$1"
		echo "\$ cd $1 (a new module beside ../brokerlab)"
		while IFS= read -r line; do
			case "$line" in "" | \#*) continue ;; esac
			echo "\$ $line"
			eval "$line"
		done <<<"$2"
	)
}

for dir in viawork viareplace; do
	new_module "$dir"
	printf '%s\n' "$example" >"$work/$dir/billing_test.go"
done
echo "== the README's user-module steps, with a workspace (empty module cache)"
run_user viawork "$workspace_steps"
echo "== the README's user-module steps, with a replace"
run_user viareplace "$replace_steps"
for dir in viawork viareplace; do
	(
		cd "$work/$dir"
		go vet ./... || fail "the README's Go example does not vet in a user module ($dir)"
		# The example is the README's failing sweep: it must fail with the
		# violation the README shows, and shrink it.
		if go test ./... >out.txt 2>&1; then
			cat out.txt >&2
			fail "the README's Go example passed in a user module ($dir); the README says it fails"
		fi
		grep -q 'exactly-once' out.txt && grep -q 'shrunk' out.txt ||
			{ cat out.txt >&2; fail "the README's Go example did not fail as the README shows ($dir)"; }
		# Every line of the README's two output blocks is in the output,
		# but for what depends on the machine: timings, how many seeds
		# ran before the sweep stopped, where the files went, and the
		# README's "..." cuts.
		missing=$(printf '%s\n%s\n' "$example_out1" "$example_out2" | while IFS= read -r line; do
			line="${line#"${line%%[![:space:]]*}"}"
			case "$line" in "" | "..." | "--- FAIL"* | *"seeds that ran failed"* | "written: "* | "(the test's TempDir"*) continue ;; esac
			grep -qF -- "$line" out.txt || echo "  $line"
		done)
		[ -z "$missing" ] ||
			{ cat out.txt >&2; fail "lines of the README's output of its Go example ('Testing your own Go code') are not in the real output ($dir); update the README:
$missing"; }
		echo "$dir: the README's example builds and fails as documented ($(grep -c 'exactly-once' out.txt) exactly-once lines)"
	)
done

readme=contrib/watermillsim/README.md
quick=$(block "$readme" "Quick start" 1 go)
[ -n "$quick" ] || fail "$readme: no go code block in its Quick start section"
# The quick start is a fragment of a test: give it what it takes as given
# (t, a router, the two handler helpers) and the imports it uses.
imports=('"testing"' '"github.com/ThreeDotsLabs/watermill/message"' "\"$ROOT_MODULE/contrib/watermillsim\"")
for p in context errors time "github.com/ThreeDotsLabs/watermill" "$ROOT_MODULE/faults" "$ROOT_MODULE/sim"; do
	if grep -q "\b${p##*/}\." <<<"$quick"; then imports+=("\"$p\""); fi
done
for n in 1 2; do
	steps=$(block "$readme" "Install" "$n" sh)
	[ -n "$steps" ] || fail "$readme: its Install section needs two sh blocks (a workspace, a replace); block $n is missing"
	dir=adapter$n
	new_module "$dir"
	{
		echo "package installcheck"
		echo
		echo "import ("
		printf '\t%s\n' "${imports[@]}"
		echo ")"
		echo
		echo "// What the README's quick start takes as given."
		echo "var router *message.Router"
		echo
		echo "func alreadyApplied(*message.Message) bool { return false }"
		echo "func applyPayment(*message.Message) error  { return nil }"
		echo
		echo "func TestQuickStart(t *testing.T) {"
		echo "$quick"
		echo "}"
	} >"$work/$dir/quickstart_test.go"
	echo "== $readme's install steps, block $n"
	run_user "$dir" "$steps"
	(
		cd "$work/$dir"
		if ! go test -c -o /dev/null . || ! go vet ./...; then
			echo "modules: the quick start of $readme does not build in a user module:" >&2
			cat -n quickstart_test.go >&2
			exit 1
		fi
	)
	echo "$dir: the adapter's quick start builds"
done
echo "modules OK"
