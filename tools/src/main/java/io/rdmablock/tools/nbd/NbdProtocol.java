package io.rdmablock.tools.nbd;

/**
 * NBD wire constants (NetworkBlockDevice/nbd {@code doc/proto.md}); every field is big-endian.
 *
 * <pre>
 * Request (28 bytes + WRITE payload)        Simple reply (16 bytes + READ payload)
 *  0  u32 magic 0x25609513                   0  u32 magic 0x67446698
 *  4  u16 command flags                      4  u32 error (NBD errno, 0 = ok)
 *  6  u16 type                               8  u64 cookie (the request's)
 *  8  u64 cookie (client's handle)
 * 16  u64 offset
 * 24  u32 length
 *
 * Option (16 bytes + data)                  Option reply (20 bytes + data)
 *  0  u64 magic 'IHAVEOPT'                   0  u64 magic 0x3e889045565a9
 *  8  u32 option                             8  u32 option (echoed)
 * 12  u32 data length                       12  u32 reply type
 *                                           16  u32 data length
 * </pre>
 */
public final class NbdProtocol {
    private NbdProtocol() {
    }

    public static final long NBDMAGIC = 0x4e42444d41474943L;
    public static final long IHAVEOPT = 0x49484156454F5054L;
    public static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    public static final int REQUEST_MAGIC = 0x25609513;
    public static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    public static final int REQUEST_BYTES = 28;
    public static final int SIMPLE_REPLY_BYTES = 16;

    // handshake flags (server) and client flags
    public static final int FLAG_FIXED_NEWSTYLE = 1;
    public static final int FLAG_NO_ZEROES = 1 << 1;
    public static final int FLAG_C_FIXED_NEWSTYLE = 1;
    public static final int FLAG_C_NO_ZEROES = 1 << 1;

    // transmission flags
    public static final int FLAG_HAS_FLAGS = 1;
    public static final int FLAG_READ_ONLY = 1 << 1;
    public static final int FLAG_SEND_FLUSH = 1 << 2;
    public static final int FLAG_SEND_FUA = 1 << 3;
    public static final int FLAG_ROTATIONAL = 1 << 4;
    public static final int FLAG_SEND_TRIM = 1 << 5;
    public static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    public static final int FLAG_SEND_DF = 1 << 7;
    public static final int FLAG_CAN_MULTI_CONN = 1 << 8;

    // options
    public static final int OPT_EXPORT_NAME = 1;
    public static final int OPT_ABORT = 2;
    public static final int OPT_LIST = 3;
    public static final int OPT_STARTTLS = 5;
    public static final int OPT_INFO = 6;
    public static final int OPT_GO = 7;
    public static final int OPT_STRUCTURED_REPLY = 8;

    // option reply types
    public static final int REP_ACK = 1;
    public static final int REP_SERVER = 2;
    public static final int REP_INFO = 3;
    public static final int REP_ERR_UNSUP = 0x80000001;
    public static final int REP_ERR_POLICY = 0x80000002;
    public static final int REP_ERR_INVALID = 0x80000003;
    public static final int REP_ERR_UNKNOWN = 0x80000006;
    public static final int REP_ERR_SHUTDOWN = 0x80000007;

    // info types (NBD_OPT_INFO / NBD_OPT_GO)
    public static final int INFO_EXPORT = 0;
    public static final int INFO_NAME = 1;
    public static final int INFO_DESCRIPTION = 2;
    public static final int INFO_BLOCK_SIZE = 3;

    // commands
    public static final int CMD_READ = 0;
    public static final int CMD_WRITE = 1;
    public static final int CMD_DISC = 2;
    public static final int CMD_FLUSH = 3;
    public static final int CMD_TRIM = 4;
    public static final int CMD_CACHE = 5;
    public static final int CMD_WRITE_ZEROES = 6;
    public static final int CMD_BLOCK_STATUS = 7;

    // command flags
    public static final int CMD_FLAG_FUA = 1;
    public static final int CMD_FLAG_NO_HOLE = 1 << 1;
    public static final int CMD_FLAG_DF = 1 << 2;
    public static final int CMD_FLAG_REQ_ONE = 1 << 3;
    public static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    // errors (the NBD protocol fixes these values)
    public static final int EPERM = 1;
    public static final int EIO = 5;
    public static final int ENOMEM = 12;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EOVERFLOW = 75;
    public static final int ENOTSUP = 95;
    public static final int ESHUTDOWN = 108;

    /** Longest option data the server reads; longer options are a protocol violation and end the session. */
    public static final int MAX_OPTION_BYTES = 64 * 1024;
    /** Longest export name (proto.md: strings MUST be no longer than 4096 bytes). */
    public static final int MAX_STRING_BYTES = 4096;
}
