#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's first command: set up, then run the release-discovery demo on real components.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
exec node scripts/demo.ts "$@"
