# shellcheck shell=bash
# Shared helpers for ops/rdma-vm scripts (sourced, not executed).
#
# Cache layout (outside the repository; never committed):
#   $RDMABLOCK_VM_CACHE (default /var/cache/rdmablock-vm)
#     current.env                 what `setup` last built (kernel release, paths); read by run-in-vm
#     <krel>/root/                the unpacked linux-image-<krel> package (dpkg -x)
#     <krel>/vmlinux              uncompressed kernel (PVH entry: boots faster under TCG than vmlinuz)
#     <krel>/siw/siw.ko           SoftiWARP built out of tree (Debian does not ship it)
#     <krel>/initramfs.cpio.gz    busybox /init + the modules, in load order
#     runs/                       per-run report directories (run-in-vm default)
#     junit/                      junit-platform-console-standalone jar (run-tests)

RDMAVM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RDMAVM_LIB="$RDMAVM_DIR/lib"
RDMAVM_CACHE="${RDMABLOCK_VM_CACHE:-/var/cache/rdmablock-vm}"

rdmavm_log() { printf 'rdma-vm: %s\n' "$*" >&2; }
rdmavm_die() { printf 'rdma-vm: ERROR: %s\n' "$*" >&2; exit 1; }

# Hash of everything that goes into the initramfs from this repository; a change rebuilds it.
rdmavm_init_hash() {
    cat "$RDMAVM_LIB/init" "$RDMAVM_LIB/build-initramfs" | sha256sum | cut -c1-16
}
