package io.rdmablock.tools.nbd;

import io.rdmablock.initiator.NvmeStatusException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Maps a failed {@link io.rdmablock.initiator.BlockDevice} I/O to the NBD error value (proto.md "Error values"). */
final class NbdErrors {
    private NbdErrors() {
    }

    static int of(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof IllegalArgumentException) {
            return NbdProtocol.EINVAL;
        }
        if (t instanceof NvmeStatusException s) {
            if (s.sct() == 0) {
                return switch (s.sc()) {
                    case 0x02, 0x80 -> NbdProtocol.EINVAL;   // invalid field, LBA out of range
                    case 0x81 -> NbdProtocol.ENOSPC;         // capacity exceeded
                    case 0x20 -> NbdProtocol.EPERM;          // namespace is write protected
                    default -> NbdProtocol.EIO;
                };
            }
            return NbdProtocol.EIO;
        }
        return NbdProtocol.EIO;
    }
}
