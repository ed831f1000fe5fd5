#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: set up, type-check, lint, then unit and integration tests against
# real components (docker-registry, etcd, skopeo, a Kubernetes control plane, QEMU), each file in
# the lane test/lanes.ts gives it (scripts/run-tests.ts). Runs on Node 24 from node_modules.
# Arguments go to scripts/run-tests.ts: `--landing` (what `.ci/run` adds), or test files.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
bash scripts/setup.sh
# QEMU, OVMF, the bootloaders and the image builder's tools: the real machines of
# test/integration/real-machine.test.ts boot from disks molt installs.
bash scripts/qemu-setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
echo "node $(node --version)"
node scripts/run-tests.ts --check "$@"
mkdir -p .molt
# The real Kubernetes control plane of test/integration/kube: KUBERNETES now (most files need it),
# the previous version (the hosted control plane's upgrade, the removed-flags table), then the node
# runtimes (kubelet, containerd, CNI plugins, crictl: scripts/ensure-node-bins.sh), the current
# version's (the node-bins test waits for it), then the previous one's (the real node's first
# release runs that kubelet; the real node is the last of its lane) — built once per
# version from the Go module proxy and cached outside the repository (docs/kubernetes.md). On a
# fresh machine that is about 20 minutes on two cores: it runs in the background, and the test
# runner (--kubernetes-building) starts the real machines' lane beside it and the lanes that need
# Kubernetes once it is there; a file needing what is still being built waits on the build
# script's per-version lock. Its log: .molt/kube-build.log; a failed build fails the run with its
# last lines.
{
  bash scripts/ensure-kube-bins.sh &&
    bash scripts/ensure-kube-bins.sh --previous &&
    bash scripts/ensure-node-bins.sh &&
    bash scripts/ensure-node-bins.sh --previous
} >.molt/kube-build.log 2>&1 &
building=$!
# The builds run in a subshell: stop the build script it is running too (its own trap stops go).
trap 'pkill -TERM -P "$building" 2>/dev/null || true; kill "$building" 2>/dev/null || true' EXIT
npm run --silent typecheck
npm run --silent lint
echo "set up, type-checked and linted in $(($(date +%s) - started)) s (Kubernetes builds beside: .molt/kube-build.log)"
status=0
node scripts/run-tests.ts --kubernetes-building "$@" || status=$?
if ! wait "$building"; then
  echo "molt: the build of Kubernetes or the node runtime failed; its last lines (.molt/kube-build.log):" >&2
  tail -n 20 .molt/kube-build.log >&2
  status=1
fi
echo "npm test: $(($(date +%s) - started)) s in all"
exit "$status"
