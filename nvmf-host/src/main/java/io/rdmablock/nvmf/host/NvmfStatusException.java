package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.NvmeStatus;

/**
 * A command completed with a non-zero NVMe status (NVMe Base Specification 2.0, Figure 92 "Status Field"):
 * {@code sct} Status Code Type (0 generic, 1 command specific, 2 media and data integrity, 3 path related),
 * {@code sc} Status Code, {@code dnr} Do Not Retry. The message is {@link #detail()} followed by the decoded status.
 */
public class NvmfStatusException extends NvmfHostException {
    private final String detail;
    private final int sct;
    private final int sc;
    private final boolean dnr;

    /** @param detail what failed (command, qid, fields), without the status; the status is appended */
    public NvmfStatusException(String detail, int sct, int sc, boolean dnr) {
        super(detail + describe(sct, sc, dnr));
        this.detail = detail;
        this.sct = sct;
        this.sc = sc;
        this.dnr = dnr;
    }

    /** The text appended to a failure's message: {@code " (NVMe status sct=0x1 sc=0x84: <name>, dnr=true)"}. */
    public static String describe(int sct, int sc, boolean dnr) {
        return String.format(" (NVMe status sct=0x%x sc=0x%02x: %s, dnr=%s)", sct, sc,
                NvmeStatus.name(NvmeStatus.of(sct, sc, dnr)), dnr);
    }

    /** Builds one from a CQE status field ({@link NvmeStatus} encoding). */
    public static NvmfStatusException of(String detail, int status) {
        return new NvmfStatusException(detail, NvmeStatus.sct(status), NvmeStatus.sc(status), NvmeStatus.dnr(status));
    }

    /** The message without the decoded status. */
    public String detail() {
        return detail;
    }

    public int sct() {
        return sct;
    }

    public int sc() {
        return sc;
    }

    public boolean dnr() {
        return dnr;
    }
}
