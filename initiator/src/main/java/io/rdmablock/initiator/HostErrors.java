package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.NvmfHostException;
import io.rdmablock.nvmf.host.NvmfStatusException;

/**
 * Translates the host-queue errors of {@code nvmf-host} into the initiator's public error types at its API boundary:
 * a {@link NvmfStatusException} becomes a {@link NvmeStatusException} with the same message, sct, sc and dnr; any
 * other {@link NvmfHostException} a {@link BlockIoException} with the same message. The original is the cause, so
 * its own cause (a {@link java.util.concurrent.TimeoutException}, a CM reject) stays reachable.
 */
final class HostErrors {
    private HostErrors() {
    }

    static BlockIoException translate(NvmfHostException e) {
        if (e instanceof NvmfStatusException s) {
            NvmeStatusException t = new NvmeStatusException(s.detail(), s.sct(), s.sc(), s.dnr());
            t.initCause(s);
            return t;
        }
        return new BlockIoException(e.getMessage(), e);
    }
}
