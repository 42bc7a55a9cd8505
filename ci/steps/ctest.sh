#!/usr/bin/env bash
# The ctest step: the C tests (bindings/c/tests/run.sh: .so, .a, C++, valgrind, ASan) and
# examples/c, in the debug profile (binding_debug).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

binding_debug
bash ci/install/install-deps.sh c
bash bindings/c/tests/run.sh
bash examples/c/check.sh
