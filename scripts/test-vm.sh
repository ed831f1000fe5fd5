#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every real-machine scenario (docs/real-machines.md): OS releases built by
# `molt image build`, installed by `molt install`, booted by OVMF with the real GRUB and
# systemd-boot under QEMU (TCG here), upgraded, broken, power-cut. Slow (tens of minutes), so only
# its core (test/integration/real-machine.test.ts) is in `npm test`. Needs root (the image build).
# Arguments: test files to run instead of all of test/vm.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/qemu-setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
start=$(date +%s)
node test/vm/prebuild.ts
if (($#)); then files=("$@"); else files=('test/vm/**/*.test.ts'); fi
# The suites mostly wait on VMs booting: run them side by side.
node --test --test-reporter=spec --test-concurrency=3 "${files[@]}"
echo "vm suite: $(($(date +%s) - start)) s" >&2
