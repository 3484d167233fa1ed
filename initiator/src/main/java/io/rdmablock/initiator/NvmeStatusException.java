package io.rdmablock.initiator;

/**
 * A command completed with a non-zero NVMe status (NVMe Base Specification 2.0, Figure 92 "Status Field").
 * {@code sct} is the Status Code Type (0 generic, 1 command specific, 2 media and data integrity, 3 path related),
 * {@code sc} the Status Code, {@code dnr} the Do Not Retry bit.
 */
public class NvmeStatusException extends BlockIoException {
    private final int sct;
    private final int sc;
    private final boolean dnr;

    public NvmeStatusException(String message, int sct, int sc, boolean dnr) {
        super(message + io.rdmablock.nvmf.host.NvmfStatusException.describe(sct, sc, dnr));
        this.sct = sct;
        this.sc = sc;
        this.dnr = dnr;
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
