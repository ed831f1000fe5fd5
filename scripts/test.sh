#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: set up, type-check, lint, then unit and integration tests against
# real components (docker-registry, etcd, skopeo, a Kubernetes control plane). Runs on Node 24 from node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# QEMU, OVMF, the bootloaders and the image builder's tools: the real machine of
# test/integration/real-machine.test.ts (issue 15) boots from a disk molt installs.
bash scripts/qemu-setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
echo "node $(node --version)"
npm run --silent typecheck
npm run --silent lint
# The real Kubernetes control plane of test/integration/kube: built once per version (about 17 min
# cold on 2 cores, with progress), then cached outside the repository (docs/kubernetes.md).
# Two versions: the hosted control plane is upgraded from KUBERNETES_PREVIOUS to KUBERNETES (issue 18).
bash scripts/ensure-kube-bins.sh --all >/dev/null
node --test --test-reporter=spec 'src/**/*.test.ts' 'test/integration/**/*.test.ts'
