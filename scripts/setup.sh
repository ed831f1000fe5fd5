#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what molt's demo and tests need on a fresh Debian machine, and nothing when it is
# already there: the Debian packages of the real components, then the npm dependencies (which bring
# Node 24 through the npm package `node`). Idempotent; quick when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# grub-common/grub2-common: grub-editenv, grub-reboot, grub-set-default (grubenv cross-checks);
# curl: the P5 peer; chromium: the dashboard's browser test (driven by playwright-core);
# iproute2: `ip netns` for lab machines in network namespaces of their own;
# fdisk dosfstools mtools e2fsprogs grub-efi-amd64-bin: `molt install` (sfdisk, mkfs.vfat, mcopy,
# mke2fs/debugfs, GRUB's x86_64-efi modules for grub-mkimage); systemd: systemd-analyze verify
# for the image's units; busybox-static: the lab's own sandbox and workload container images;
# mmdebstrap: the operator image's Debian base (`molt image build --operator`).
DEBS=(docker-registry etcd-server etcd-client skopeo ca-certificates apache2-utils openssl
  grub-common grub2-common curl chromium iproute2 fdisk dosfstools mtools e2fsprogs
  grub-efi-amd64-bin systemd busybox-static mmdebstrap)
missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "molt setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The docker-registry package starts a system-wide registry on :5000 that molt never uses;
  # tests start their own on loopback, so stop it when systemd is present (best effort).
  if command -v systemctl >/dev/null && systemctl is-active --quiet docker-registry 2>/dev/null; then
    $SUDO systemctl stop docker-registry || true
  fi
fi

# bootctl for the Boot Loader Spec cross-checks. Debian ships it in `systemd-boot`, whose install
# hooks would try to write an ESP; extract the package matching the installed systemd (bootctl
# links systemd's private library) into a cache instead. Printed path: .molt/tools/bootctl.
if command -v dpkg-query >/dev/null && dpkg-query -W systemd >/dev/null 2>&1; then
  sd_version="$(dpkg-query -W -f='${Version}' systemd)"
  tools=.molt/tools
  if [ ! -x "$tools/bootctl" ] || [ "$(cat "$tools/bootctl.version" 2>/dev/null)" != "$sd_version" ]; then
    echo "molt setup: extracting bootctl from systemd-boot $sd_version" >&2
    work="$(mktemp -d)"
    (cd "$work" && apt-get download -qq "systemd-boot=$sd_version" >/dev/null 2>&1) ||
      (cd "$work" && apt-get update -qq && apt-get download -qq "systemd-boot=$sd_version" >/dev/null)
    dpkg -x "$work"/systemd-boot_*.deb "$work/x"
    mkdir -p "$tools"
    cp "$work/x/usr/bin/bootctl" "$tools/bootctl"
    echo "$sd_version" >"$tools/bootctl.version"
    rm -rf "$work"
  fi
  # systemd-boot's EFI binary for `molt install --bootloader systemd-boot` in the tests (Debian's
  # systemd-boot-efi, same version): .molt/tools/systemd-bootx64.efi.
  if [ ! -s "$tools/systemd-bootx64.efi" ] || [ "$(cat "$tools/systemd-bootx64.efi.version" 2>/dev/null)" != "$sd_version" ]; then
    echo "molt setup: extracting systemd-bootx64.efi from systemd-boot-efi $sd_version" >&2
    work="$(mktemp -d)"
    chmod 755 "$work"
    [ "$(id -u)" != 0 ] || chown _apt "$work" 2>/dev/null || true # apt downloads as _apt
    (cd "$work" && apt-get download -qq "systemd-boot-efi=$sd_version" >/dev/null 2>&1) ||
      (cd "$work" && apt-get update -qq && apt-get download -qq "systemd-boot-efi=$sd_version" >/dev/null)
    dpkg -x "$work"/systemd-boot-efi_*.deb "$work/x"
    mkdir -p "$tools"
    cp "$work/x/usr/lib/systemd/boot/efi/systemd-bootx64.efi" "$tools/systemd-bootx64.efi"
    echo "$sd_version" >"$tools/systemd-bootx64.efi.version"
    rm -rf "$work"
  fi
fi

# npm dependencies: reinstall only when the lockfile's content changed since the last install
# (by digest, not mtime: a fresh checkout or worktree sharing node_modules has newer files).
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -x node_modules/.bin/node ] || [ "$(cat node_modules/.molt-lock.sha256 2>/dev/null)" != "$lock_sum" ]; then
  echo "molt setup: installing npm dependencies (includes Node 24)" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" >node_modules/.molt-lock.sha256
fi
