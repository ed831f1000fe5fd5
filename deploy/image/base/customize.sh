#!/bin/sh
# mmdebstrap's customize hook for molt's base tree (docs/image.md), run on the build host as root
# after every package is installed: $1 is the new root, $2 the cache directory that receives the
# kernel, the initramfs and the package list, $3 "prune" to drop the kernel modules no server
# needs. The tree leaves without /boot: the kernel and initramfs are artifacts of their own.
set -eu
root="$1" out="$2" prune="$3"

kernel="$(ls "$root/usr/lib/modules" | head -n 1)"
[ -n "$kernel" ] || { echo "customize: no kernel modules in the tree" >&2; exit 1; }
cp "$root/boot/vmlinuz-$kernel" "$out/vmlinuz"
cp "$root/boot/initrd.img-$kernel" "$out/initrd.img"
printf '%s\n' "$kernel" >"$out/kernel"
rm -rf "$root"/boot/* "$root"/vmlinuz* "$root"/initrd.img*

# Sound, video capture, GPUs, radios and the like: 150+ MB of modules a server never loads (the
# initramfs was built before, with the drivers it needs).
if [ "$prune" = prune ]; then
  k="$root/usr/lib/modules/$kernel/kernel"
  for d in sound drivers/media drivers/gpu drivers/net/wireless net/wireless net/mac80211 \
    net/bluetooth drivers/bluetooth drivers/staging drivers/iio drivers/infiniband net/rds \
    drivers/isdn drivers/input/joystick drivers/input/touchscreen drivers/input/tablet \
    drivers/net/can net/can drivers/nfc net/nfc drivers/usb/gadget drivers/mtd drivers/comedi \
    drivers/net/ieee802154 net/ieee802154 net/mac802154; do
    rm -rf "${k:?}/$d"
  done
  chroot "$root" depmod "$kernel"
fi

# A read-only root has no use for package timers; networkd and resolved configure the network.
chroot "$root" systemctl disable --quiet apt-daily.timer apt-daily-upgrade.timer \
  dpkg-db-backup.timer e2scrub_all.timer e2scrub_reap.service 2>/dev/null || true
chroot "$root" systemctl enable --quiet systemd-networkd.service systemd-resolved.service
chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$out/packages.txt"
