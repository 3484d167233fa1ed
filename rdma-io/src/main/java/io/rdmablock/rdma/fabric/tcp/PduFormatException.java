package io.rdmablock.rdma.fabric.tcp;

/**
 * A PDU that breaks the NVMe/TCP Transport Specification 1.0: the connection cannot go on. Carries what a
 * C2HTermReq/H2CTermReq reports ({@link TermPdu}): the Fatal Error Status ({@link #fes}, one of
 * {@link TermPdu#FES_INVALID_PDU_HEADER} ...) and the Fatal Error Information ({@link #fei}: for an invalid header
 * field the byte offset of that field in the PDU header, else 0), or {@link TermPdu#FES_NONE} for a data digest
 * error, which the specification does not answer with a termination PDU (section 3.6.2: the command completes with
 * Transient Transport Error, or the connection is closed as Linux nvmet does).
 */
public final class PduFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** Fatal Error Status (section 3.6.2.x, Figure "FES values"); {@link TermPdu#FES_NONE} for a data digest error. */
    public final int fes;
    /** Fatal Error Information: byte offset of the offending header field for {@link TermPdu#FES_INVALID_PDU_HEADER}. */
    public final int fei;

    /**
     * @param fes the Fatal Error Status to report
     * @param fei the Fatal Error Information to report
     * @param message what was wrong, naming the field, its value and the bounds
     */
    public PduFormatException(int fes, int fei, String message) {
        super(message);
        this.fes = fes;
        this.fei = fei;
    }

    /** True for a data digest mismatch ({@link TermPdu#FES_NONE}): no FES exists for it. */
    public boolean isDataDigestError() {
        return fes == TermPdu.FES_NONE;
    }
}
