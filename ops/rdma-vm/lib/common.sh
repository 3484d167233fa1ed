# shellcheck shell=bash
# Shared helpers for ops/rdma-vm scripts (sourced, not executed).
#
# Cache layout (outside the repository; never committed):
#   $RDMABLOCK_VM_CACHE (default /var/cache/rdmablock-vm)
#     current.env                 what `setup` last built (kernel release, paths); read by run-in-vm
#     <krel>/root/                the unpacked linux-image-<krel> package (dpkg -x)
#     <krel>/vmlinux              uncompressed kernel (PVH entry: boots faster under TCG than vmlinuz)
#     <krel>/siw/siw.ko           SoftiWARP built out of tree (Debian does not ship it)
#     <krel>/nvme-auth/           NVMe host modules with CONFIG_NVME_AUTH + dh_rfc7919 (setup; done = their hashes)
#     <krel>/initramfs-<hash>.cpio.gz  busybox /init + the modules, in load order (<hash>: rdmavm_init_hash)
#     <krel>/initramfs.cpio.gz    the same, as checkouts before the hash-named file built it (left to them)
#     runs/                       per-run report directories (run-in-vm default)
#     junit/                      junit-platform-console-standalone jar (run-tests)

RDMAVM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RDMAVM_LIB="$RDMAVM_DIR/lib"
RDMAVM_CACHE="${RDMABLOCK_VM_CACHE:-/var/cache/rdmablock-vm}"

rdmavm_log() { printf 'rdma-vm: %s\n' "$*" >&2; }
rdmavm_die() { printf 'rdma-vm: ERROR: %s\n' "$*" >&2; exit 1; }

# Hash of everything that goes into the initramfs of <kdir> (this repository's init and builder, the NVMe host
# modules setup built); a change makes another file.
rdmavm_init_hash() { # KDIR
    cat "$RDMAVM_LIB/init" "$RDMAVM_LIB/build-initramfs" "$1/nvme-auth/done" 2>/dev/null | sha256sum | cut -c1-16
}
rdmavm_initrd() { # KDIR -> the initramfs path for the current inputs
    printf '%s/initramfs-%s.cpio.gz\n' "$1" "$(rdmavm_init_hash "$1")"
}
