#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The QEMU boot suite (docs/qemu-suite.md): the real GRUB and systemd-boot under
# qemu-system-x86_64 (TCG) with OVMF, booting ESPs written by molt's bootloader back-ends.
# Slow (minutes), so not part of `npm test`. Arguments: test files to run instead of all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/qemu-setup.sh
export PATH="$PWD/node_modules/.bin:$PATH"
start=$(date +%s)
if (($#)); then files=("$@"); else files=('test/qemu/**/*.test.ts'); fi
node --test --test-reporter=spec --test-concurrency=1 "${files[@]}"
echo "qemu suite: $(($(date +%s) - start)) s" >&2
