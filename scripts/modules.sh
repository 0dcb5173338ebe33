#!/usr/bin/env bash
# scripts/modules.sh builds and tests every nested module (the Watermill
# adapter, the benchmark suite) twice, and checks that the adapter installs
# as its README says. .ci/run calls it; run it from anywhere in the clone.
#
#  1. through the workspace (go.work): go vet, go test without and with
#     -race (the synctest harness's replay tests must hold both ways),
#     against the root module in this working tree;
#  2. on its own (GOWORK=off): the same against the root commit its go.mod
#     pins, as a user of the module builds it. A module that passes 1 and
#     fails 2 uses root APIs newer than its pin: commit the root, then run
#     scripts/bump-root.sh and commit the nested go.mod and go.sum;
#  3. the install check: in a fresh module outside the clone, the install
#     line of contrib/watermillsim/README.md (go get ...@latest), then the
#     README's quick start, taken from the README, built against what that
#     go get chose.
#
# The root module is resolved from this clone's commits (local_resolution in
# scripts/bump-root.sh), so this works offline and before a push; step 3
# therefore installs the newest commit of the clone, not the working tree.
set -euo pipefail
# shellcheck source=scripts/bump-root.sh
. "$(dirname "${BASH_SOURCE[0]}")/bump-root.sh"
cd "$REPO_ROOT"
local_resolution

readme=contrib/watermillsim/README.md
zero=v0.0.0-00010101000000-000000000000

fail() {
	echo "modules: $*" >&2
	exit 1
}

# stale explains a module that builds through the workspace but not on its
# own, and stops the run.
stale() {
	local m=$1 pin=$2 commit=${2##*-}
	{
		echo
		echo "modules: $m passes through the workspace but FAILS ON ITS OWN against the root it pins,"
		echo "modules: $ROOT_MODULE $pin (commit $commit)."
		if git cat-file -e "$commit^{commit}" 2>/dev/null; then
			echo "modules: root Go files changed since that commit:"
			git diff --stat "$commit" HEAD -- '*.go' ':!contrib/watermillsim' ':!bench' | tail -n 8 | sed 's/^/modules:   /'
		fi
		echo "modules: If $m uses root APIs newer than its pin: commit the root, then"
		echo "modules:     run scripts/bump-root.sh"
		echo "modules: and commit $m/go.mod and $m/go.sum (see the script's header)."
	} >&2
	exit 1
}

for m in "${NESTED_MODULES[@]}"; do
	[ -f "$m/go.mod" ] || fail "$m/go.mod is missing"
	go work edit -json go.work | grep -q "\"DiskPath\": \"./$m\"" || fail "go.work does not use ./$m"
	pin=$(root_pin "$m")
	case "$pin" in
	"") fail "$m/go.mod does not require $ROOT_MODULE" ;;
	"$zero") fail "$m/go.mod requires $ROOT_MODULE at the zero pseudo-version; run scripts/bump-root.sh" ;;
	*-[0-9]*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f])
		git cat-file -e "${pin##*-}^{commit}" 2>/dev/null ||
			fail "$m/go.mod pins $ROOT_MODULE $pin, whose commit ${pin##*-} is not in this clone (a shallow clone?)"
		;;
	esac
	if (cd "$m" && GOWORK=off go mod edit -print) | grep -q '^replace'; then
		fail "$m/go.mod has a replace directive, which a user of the module never sees; run scripts/bump-root.sh"
	fi
done
fetch_pins

for m in "${NESTED_MODULES[@]}"; do
	pin=$(root_pin "$m")
	echo "== $m through the workspace (go.work: the root in this tree)"
	(cd "$m" && go vet ./... && go test ./... && go test -race ./...)

	echo "== $m on its own (GOWORK=off: the root at $pin)"
	(cd "$m" && GOWORK=off go mod verify && GOWORK=off go mod tidy -diff) ||
		fail "$m/go.mod or go.sum is not tidy or does not verify (above); run scripts/bump-root.sh"
	if ! (cd "$m" && GOWORK=off go vet ./... && GOWORK=off go test -race ./...); then
		stale "$m" "$pin"
	fi
done

echo "== install check: $readme's install line in a fresh module"
# The install line: the first `go get` line of the README's Install section.
install=$(awk '/^## /{ins = ($0 == "## Install")} ins && /^go get /{print; exit}' "$readme")
[[ "$install" =~ ^go\ get\ (github\.com/brokerlab/brokerlab/contrib/watermillsim)@latest$ ]] ||
	fail "$readme: no 'go get github.com/brokerlab/brokerlab/contrib/watermillsim@latest' in its ## Install section (found: '${install}')"
path=${BASH_REMATCH[1]}
# The quick start: the first go block of the README's Quick start section.
quick=$(awk '/^## /{q = ($0 == "## Quick start")} q && /^```go$/{code = 1; next} code && /^```$/{exit} code {print}' "$readme")
[ -n "$quick" ] || fail "$readme: no go code block in its ## Quick start section"

work="$LOCAL_TMP/install"
mkdir -p "$work"
(
	cd "$work"
	export GOWORK=off GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
	go mod init example.com/installcheck >/dev/null 2>&1
	echo "\$ $install"
	$install
	got=$(go list -m -f '{{.Version}}' "$path")
	root=$(go list -m -f '{{.Version}}' "$ROOT_MODULE")
	echo "installed $path $got, with $ROOT_MODULE $root"

	# The quick start is a fragment of a test: give it what it takes as
	# given (t, a router, the two handler helpers) and the imports it uses.
	imports=('"testing"' '"github.com/ThreeDotsLabs/watermill/message"' "\"$path\"")
	for p in context errors time "github.com/ThreeDotsLabs/watermill" "$ROOT_MODULE/faults" "$ROOT_MODULE/sim"; do
		if grep -q "\b${p##*/}\." <<<"$quick"; then imports+=("\"$p\""); fi
	done
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
	} >quickstart_test.go
	go mod tidy
	if ! go test -c -o /dev/null . || ! go vet ./...; then
		echo "modules: the quick start of $readme does not build against $path $got:" >&2
		cat -n quickstart_test.go >&2
		exit 1
	fi
	echo "the quick start builds"
)
echo "modules OK"
