/* Prints the native layouts and constants the store's FFM code hard-codes, as "name value" lines, for
 * IoUringLayoutTest. Built from the system's kernel headers (linux-libc-dev). */
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <linux/stat.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <asm/unistd.h>
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>

#define P(name, v) printf("%s %ld\n", name, (long) (v))

int main(void) {
    P("PARAMS_BYTES", sizeof(struct io_uring_params));
    P("PARAMS_FEATURES", offsetof(struct io_uring_params, features));
    P("PARAMS_SQ_OFF", offsetof(struct io_uring_params, sq_off));
    P("PARAMS_CQ_OFF", offsetof(struct io_uring_params, cq_off));
    P("SQOFF_HEAD", offsetof(struct io_sqring_offsets, head));
    P("SQOFF_TAIL", offsetof(struct io_sqring_offsets, tail));
    P("SQOFF_RING_MASK", offsetof(struct io_sqring_offsets, ring_mask));
    P("SQOFF_ARRAY", offsetof(struct io_sqring_offsets, array));
    P("CQOFF_HEAD", offsetof(struct io_cqring_offsets, head));
    P("CQOFF_TAIL", offsetof(struct io_cqring_offsets, tail));
    P("CQOFF_RING_MASK", offsetof(struct io_cqring_offsets, ring_mask));
    P("CQOFF_CQES", offsetof(struct io_cqring_offsets, cqes));
    P("SQE_BYTES", sizeof(struct io_uring_sqe));
    P("SQE_FLAGS", offsetof(struct io_uring_sqe, flags));
    P("SQE_FD", offsetof(struct io_uring_sqe, fd));
    P("SQE_OFF", offsetof(struct io_uring_sqe, off));
    P("SQE_ADDR", offsetof(struct io_uring_sqe, addr));
    P("SQE_LEN", offsetof(struct io_uring_sqe, len));
    P("SQE_RW_FLAGS", offsetof(struct io_uring_sqe, rw_flags));
    P("SQE_USER_DATA", offsetof(struct io_uring_sqe, user_data));
    P("SQE_BUF_INDEX", offsetof(struct io_uring_sqe, buf_index));
    P("CQE_BYTES", sizeof(struct io_uring_cqe));
    P("CQE_RES", offsetof(struct io_uring_cqe, res));
    P("GETEVENTS_ARG_BYTES", sizeof(struct io_uring_getevents_arg));
    P("GETEVENTS_ARG_TS", offsetof(struct io_uring_getevents_arg, ts));
    P("RSRC_REGISTER_BYTES", sizeof(struct io_uring_rsrc_register));
    P("FILES_UPDATE_FDS", offsetof(struct io_uring_files_update, fds));
    P("PROBE_OPS", offsetof(struct io_uring_probe, ops));
    P("PROBE_OP_BYTES", sizeof(struct io_uring_probe_op));
    P("PROBE_OP_FLAGS", offsetof(struct io_uring_probe_op, flags));
    P("OP_FSYNC", IORING_OP_FSYNC);
    P("OP_READ_FIXED", IORING_OP_READ_FIXED);
    P("OP_WRITE_FIXED", IORING_OP_WRITE_FIXED);
    P("OP_FALLOCATE", IORING_OP_FALLOCATE);
    P("OP_READ", IORING_OP_READ);
    P("OP_WRITE", IORING_OP_WRITE);
    P("FSYNC_DATASYNC", IORING_FSYNC_DATASYNC);
    P("SQE_FIXED_FILE", IOSQE_FIXED_FILE);
    P("ENTER_GETEVENTS", IORING_ENTER_GETEVENTS);
    P("ENTER_EXT_ARG", IORING_ENTER_EXT_ARG);
    P("FEAT_SINGLE_MMAP", IORING_FEAT_SINGLE_MMAP);
    P("FEAT_EXT_ARG", IORING_FEAT_EXT_ARG);
    P("REGISTER_BUFFERS", IORING_REGISTER_BUFFERS);
    P("REGISTER_FILES_UPDATE", IORING_REGISTER_FILES_UPDATE);
    P("REGISTER_PROBE", IORING_REGISTER_PROBE);
    P("REGISTER_FILES2", IORING_REGISTER_FILES2);
    P("RSRC_REGISTER_SPARSE", IORING_RSRC_REGISTER_SPARSE);
    P("SYS_IO_URING_SETUP", __NR_io_uring_setup);
    P("SYS_IO_URING_ENTER", __NR_io_uring_enter);
    P("SYS_IO_URING_REGISTER", __NR_io_uring_register);
    P("STATX_DIOALIGN", STATX_DIOALIGN);
    P("STATX_BYTES", sizeof(struct statx));
    P("STATX_DIO_MEM_ALIGN", offsetof(struct statx, stx_dio_mem_align));
    P("STATX_DIO_OFFSET_ALIGN", offsetof(struct statx, stx_dio_offset_align));
    P("FALLOC_FL_KEEP_SIZE", FALLOC_FL_KEEP_SIZE);
    P("FALLOC_FL_PUNCH_HOLE", FALLOC_FL_PUNCH_HOLE);
    P("FALLOC_FL_ZERO_RANGE", FALLOC_FL_ZERO_RANGE);
    P("RWF_DSYNC", RWF_DSYNC);
    P("O_DIRECT", O_DIRECT);
    P("O_DIRECTORY", O_DIRECTORY);
    P("O_CLOEXEC", O_CLOEXEC);
    P("O_CREAT", O_CREAT);
    P("O_EXCL", O_EXCL);
    return 0;
}
