#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: set up, type-check, lint, then unit and integration tests against
# real components (docker-registry, etcd, skopeo). Runs on Node 24 from node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
echo "node $(node --version)"
npm run --silent typecheck
npm run --silent lint
node --test --test-reporter=spec 'src/**/*.test.ts' 'test/integration/**/*.test.ts'
