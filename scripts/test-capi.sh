#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Cluster API slow suite: a real CAPI management plane (core, KCP, CABPK, CAPD's
# in-memory backend) on the project's kube-apiserver (test/capi). Building the managers costs about
# 5 min on 2 cores once (then cached, scripts/ensure-capi-bins.sh), which `npm test` cannot carry:
# run it on its own, `npm run test:capi`. Arguments: test files to run instead of all of test/capi.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
start=$(date +%s)
bash scripts/ensure-kube-bins.sh >/dev/null
bash scripts/ensure-capi-bins.sh >/dev/null
if (($#)); then files=("$@"); else files=('test/capi/**/*.test.ts'); fi
node --test --test-reporter=spec --test-concurrency=1 "${files[@]}"
echo "capi suite: $(($(date +%s) - start)) s" >&2
