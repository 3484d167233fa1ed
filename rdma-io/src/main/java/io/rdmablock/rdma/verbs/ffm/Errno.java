package io.rdmablock.rdma.verbs.ffm;

/** Linux errno names (asm-generic/errno-base.h, errno.h) for failure messages. */
final class Errno {
    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    static final int ENODEV = 19;
    static final int ENOSYS = 38;

    private static final String[] NAMES = new String[134];

    static {
        String[] pairs = {
            "1", "EPERM", "2", "ENOENT", "3", "ESRCH", "4", "EINTR", "5", "EIO", "6", "ENXIO", "7", "E2BIG",
            "9", "EBADF", "11", "EAGAIN", "12", "ENOMEM", "13", "EACCES", "14", "EFAULT", "16", "EBUSY",
            "17", "EEXIST", "19", "ENODEV", "22", "EINVAL", "23", "ENFILE", "24", "EMFILE", "28", "ENOSPC",
            "32", "EPIPE", "34", "ERANGE", "38", "ENOSYS", "61", "ENODATA", "62", "ETIME", "71", "EPROTO",
            "75", "EOVERFLOW", "95", "EOPNOTSUPP", "97", "EAFNOSUPPORT", "98", "EADDRINUSE", "99", "EADDRNOTAVAIL",
            "100", "ENETDOWN", "101", "ENETUNREACH", "103", "ECONNABORTED", "104", "ECONNRESET", "107", "ENOTCONN",
            "110", "ETIMEDOUT", "111", "ECONNREFUSED", "113", "EHOSTUNREACH", "114", "EALREADY",
            "115", "EINPROGRESS"};
        for (int i = 0; i < pairs.length; i += 2) {
            NAMES[Integer.parseInt(pairs[i])] = pairs[i + 1];
        }
    }

    private Errno() {
    }

    /** The symbolic name, or {@code "errno N"} when unknown. */
    static String name(int errno) {
        String n = errno >= 0 && errno < NAMES.length ? NAMES[errno] : null;
        return n != null ? n : "errno " + errno;
    }
}
