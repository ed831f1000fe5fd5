#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the QEMU boot suite (scripts/test-qemu.sh, docs/qemu-suite.md) needs, and nothing
# when it is already there:
#   - Debian packages: qemu-system-x86 (TCG is enough), ovmf (UEFI firmware), mtools + dosfstools +
#     fdisk (the ESP image), grub-efi-amd64-bin (the real GRUB, built into BOOTX64.EFI per run),
#     mmdebstrap + squashfs-tools + e2fsprogs + cryptsetup-bin (`molt image build`: veritysetup for
#     the root filesystem's hash tree; and test/vm's disk images).
#   - Extracted, not installed, into the cache dir (default .molt/qemu, or $MOLT_QEMU_CACHE):
#     systemd-boot-efi (systemd-bootx64.efi; `dpkg -x`, so no ESP hook runs), a Debian kernel
#     (linux-image-*-cloud-amd64: the vmlinuz only) and busybox-static (the initramfs payload);
#     for the VM runner's tests (test/vm), the generic kernel (linux-image-*-amd64) with the few
#     modules they load: the cloud kernel has no hardware watchdog driver (CONFIG_I6300ESB_WDT and
#     CONFIG_ITCO_WDT are not set), the generic one builds i6300esb as a module.
# Prints nothing but progress on stderr; idempotent; quick when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${MOLT_QEMU_CACHE:-.molt/qemu}"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

DEBS=(qemu-system-x86 ovmf mtools dosfstools fdisk grub-efi-amd64-bin mmdebstrap squashfs-tools e2fsprogs
  cryptsetup-bin)
missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
updated=""
if ((${#missing[@]})); then
  echo "qemu-setup: installing Debian packages: ${missing[*]}" >&2
  $SUDO apt-get update -qq; updated=1
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Downloads package $1 (exact name) and extracts it into $cache/$2; records the version.
extract() {
  local pkg="$1" dest="$cache/$2" version
  version="$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -1)"
  if [ -z "$version" ] && [ -z "$updated" ]; then
    $SUDO apt-get update -qq; updated=1
    version="$(apt-cache show --no-all-versions "$pkg" | sed -n 's/^Version: //p' | head -1)"
  fi
  if [ -d "$dest" ] && [ "$(cat "$dest.version" 2>/dev/null)" = "$pkg=$version" ]; then return; fi
  echo "qemu-setup: extracting $pkg $version into $dest" >&2
  local work; work="$(mktemp -d)"; chmod 755 "$work"
  [ "$(id -u)" != 0 ] || chown _apt "$work" 2>/dev/null || true # apt downloads as _apt
  (cd "$work" && apt-get download -qq "$pkg=$version" >/dev/null)
  rm -rf "$dest"; mkdir -p "$dest"
  dpkg -x "$work"/*.deb "$dest"
  rm -rf "$work"
  echo "$pkg=$version" >"$dest.version"
}

mkdir -p "$cache"
extract systemd-boot-efi sdboot
extract busybox-static busybox
# The metapackage names the current kernel package; only its vmlinuz is kept (modules not needed:
# the initramfs uses nothing but built-in drivers: 8250 serial, devtmpfs, ACPI power-off).
kpkg="$(apt-cache show --no-all-versions linux-image-cloud-amd64 | sed -n 's/^Depends: \([^ ,]*\).*/\1/p' | head -1)"
if [ -z "$kpkg" ] && [ -z "$updated" ]; then
  $SUDO apt-get update -qq; updated=1
  kpkg="$(apt-cache show --no-all-versions linux-image-cloud-amd64 | sed -n 's/^Depends: \([^ ,]*\).*/\1/p' | head -1)"
fi
extract "$kpkg" kernel
if [ -d "$cache/kernel/lib" ]; then
  cp "$cache"/kernel/boot/vmlinuz-* "$cache/vmlinuz.tmp" && mv "$cache/vmlinuz.tmp" "$cache/vmlinuz"
  rm -rf "$cache/kernel/lib" "$cache/kernel/usr"
fi
[ -f "$cache/vmlinuz" ] || cp "$cache"/kernel/boot/vmlinuz-* "$cache/vmlinuz"

# The generic kernel for test/vm: vmlinuz plus the watchdog (i6300esb) and virtio-net modules and
# their dependencies (the payload loads them in order with busybox modprobe after busybox depmod).
vpkg="$(apt-cache show --no-all-versions linux-image-amd64 | sed -n 's/^Depends: \([^ ,]*\).*/\1/p' | head -1)"
extract "$vpkg" vmkernel
keep='/(watchdog|i6300esb|efivarfs|virtio|virtio_ring|virtio_pci|virtio_pci_modern_dev|virtio_pci_legacy_dev|failover|net_failover|virtio_net)\.ko$'
if [ ! -f "$cache/vmkernel/vmlinuz" ]; then # freshly extracted: keep only what test/vm uses
  cp "$cache"/vmkernel/boot/vmlinuz-* "$cache/vmkernel/vmlinuz"
  find "$cache/vmkernel/lib/modules" -type f ! -name '*.ko' -delete
  find "$cache/vmkernel/lib/modules" -name '*.ko' | grep -Ev "$keep" | xargs rm -f
  find "$cache/vmkernel/lib/modules" -type d -empty -delete
  rm -rf "$cache/vmkernel/usr" "$cache/vmkernel/boot" "$cache/vmkernel/etc"
fi

for f in "$cache/vmkernel/vmlinuz" "$cache/sdboot/usr/lib/systemd/boot/efi/systemd-bootx64.efi" "$cache/busybox/bin/busybox" \
  "$cache/vmlinuz" /usr/share/OVMF/OVMF_CODE_4M.fd /usr/share/OVMF/OVMF_VARS_4M.fd; do
  [ -s "$f" ] || { echo "qemu-setup: missing $f" >&2; exit 1; }
done
echo "qemu-setup: ready in $cache" >&2
