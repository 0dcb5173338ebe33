#!/usr/bin/env bash
# scripts/bump-root.sh [COMMIT] pins the root module in the nested modules'
# go.mod (contrib/watermillsim, bench) to the pseudo-version of COMMIT
# (default HEAD) and tidies their go.sum. Run it after committing the root
# whenever a nested module uses root APIs newer than its pin, then commit
# the two go.mod and go.sum files:
#
#	scripts/bump-root.sh && git add contrib/watermillsim/go.* bench/go.* && git commit
#
# The pin is a real commit of the repository, so `go get` resolves it from
# the public repository like any dependency; no replace directive is needed.
# Here the root module is resolved from this clone instead (see
# local_resolution), so the script works offline and before a push.
#
# scripts/bump-root.sh --fetch only downloads the pinned root into the module
# cache, which going through the workspace (go.work) needs where the module
# proxy cannot serve it. Sourced (`. scripts/bump-root.sh`), the script only
# defines its functions and variables (scripts/modules.sh uses them).
set -euo pipefail

ROOT_MODULE=github.com/brokerlab/brokerlab
NESTED_MODULES=(contrib/watermillsim bench)
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# local_resolution makes the go command fetch $ROOT_MODULE (and every module
# under its path, such as contrib/watermillsim) from this clone's commits,
# with git, instead of from the network: a private git config (in a
# temporary directory, removed on exit) rewrites the repository's URL to
# this clone, and GOPRIVATE sends the module to git directly, without the
# proxy or the checksum database. Every other module is resolved as usual.
# What it fetches lands in the module cache like any download: the same
# module zip as the public repository gives for that commit, so the h1:
# hashes in go.sum are the same either way. The user's git config and go env
# are left as they are; the variables are exported to this script only.
local_resolution() {
	if [ -n "${LOCAL_TMP:-}" ]; then return; fi
	local user_private
	user_private=$(go env GOPRIVATE)
	LOCAL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/brokerlab-modules.XXXXXX")
	trap 'rm -rf "$LOCAL_TMP"' EXIT
	cat >"$LOCAL_TMP/gitconfig" <<-EOF
		[url "file://$REPO_ROOT"]
			insteadOf = https://$ROOT_MODULE
		[safe]
			directory = $REPO_ROOT
		[protocol "file"]
			allow = always
	EOF
	export GIT_CONFIG_GLOBAL="$LOCAL_TMP/gitconfig" GIT_CONFIG_NOSYSTEM=1
	export GIT_TERMINAL_PROMPT=0
	export GOPRIVATE="$ROOT_MODULE${user_private:+,$user_private}"
}

# fetch_pins downloads the pinned root of every nested module into the module
# cache. The workspace needs it too: the go command reads the go.mod of every
# required version, even of a module the workspace replaces.
fetch_pins() {
	local m
	local_resolution
	for m in "${NESTED_MODULES[@]}"; do
		(cd "$REPO_ROOT/$m" && GOWORK=off go mod download "$ROOT_MODULE")
	done
}

# root_pin prints the version of $ROOT_MODULE that nested module $1 requires.
root_pin() {
	(cd "$REPO_ROOT/$1" && GOWORK=off go mod edit -print) |
		awk -v m="$ROOT_MODULE" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }'
}

bump_root() {
	local rev=${1:-HEAD} commit m version
	commit=$(git -C "$REPO_ROOT" rev-parse --verify --quiet "$rev^{commit}") || {
		echo "bump-root: $rev is not a commit of this repository" >&2
		return 1
	}
	if git -C "$REPO_ROOT" rev-parse --verify --quiet main >/dev/null &&
		! git -C "$REPO_ROOT" merge-base --is-ancestor "$commit" main; then
		echo "bump-root: warning: $rev is not on main; users resolve the pin from the public repository" >&2
	fi
	if ! git -C "$REPO_ROOT" diff --quiet "$commit" -- . ':!contrib/watermillsim' ':!bench'; then
		echo "bump-root: note: the root module's files differ from $rev in the working tree;" >&2
		echo "bump-root: the pin is the commit $rev, not the working tree (commit first to pin your changes)" >&2
	fi
	local_resolution
	for m in "${NESTED_MODULES[@]}"; do
		(
			cd "$REPO_ROOT/$m"
			export GOWORK=off
			# Drop the old pin first: go get would load it, and fail if it does
			# not resolve (as the zero pseudo-version does not).
			go mod edit -dropreplace="$ROOT_MODULE" -droprequire="$ROOT_MODULE"
			go get "$ROOT_MODULE@$commit"
			go mod tidy
			version=$(go list -m -f '{{.Version}}' "$ROOT_MODULE")
			echo "bump-root: $m requires $ROOT_MODULE $version"
		)
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	--fetch) fetch_pins ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' ;;
	*) bump_root "$@" ;;
	esac
fi
