#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Kubernetes versions slow suite: what needs a third Kubernetes build — a patch
# downgrade of the hosted control plane on real binaries, KUBERNETES → KUBERNETES_EARLIER_PATCH
# (test/kube-versions). The build costs about 5 min on 2 cores once (then it is cached), which
# `npm test`'s 60-minute budget cannot carry: run it on its own, `npm run test:kube-versions`.
# Arguments: test files to run instead of all of test/kube-versions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
# shellcheck source=kube-versions.env
source scripts/kube-versions.env
start=$(date +%s)
bash scripts/ensure-kube-bins.sh "$KUBERNETES" >/dev/null
bash scripts/ensure-kube-bins.sh "$KUBERNETES_EARLIER_PATCH" >/dev/null
if (($#)); then files=("$@"); else files=('test/kube-versions/**/*.test.ts'); fi
node --test --test-reporter=spec "${files[@]}"
echo "kube-versions suite: $(($(date +%s) - start)) s" >&2
