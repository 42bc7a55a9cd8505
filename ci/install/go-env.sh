# Sourced by the scripts that build Go (ci/steps/go.sh, ci/dist/dist-test.sh, ci/docs.sh): installs
# the toolchain (install-go.sh) and exports what every Go build of the project uses. GOPATH and
# GOCACHE live under $IDFORGE_CACHE/go, so runs reuse them; nothing is fetched at build time
# (GOPROXY=off, GOTOOLCHAIN=local): the idforge module has no dependencies and the benchmarks'
# peers are Debian's packages, named by replace directives.
IDFORGE_GO_BIN="$(bash "$(dirname "${BASH_SOURCE[0]}")/install-go.sh")"
export PATH="$IDFORGE_GO_BIN:$PATH"
export GOPATH="${IDFORGE_CACHE:-$HOME/.cache/idforge}/go/path"
export GOCACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}/go/cache"
export GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off GOFLAGS=-mod=mod
