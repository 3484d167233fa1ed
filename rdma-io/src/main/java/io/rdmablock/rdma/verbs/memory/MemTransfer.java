package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WrOpcode;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import io.rdmablock.rdma.verbs.emu.EmuQp;
import java.lang.foreign.MemorySegment;

/**
 * Executes one send WR of a requester QP against its responder, as the soft provider's responder does
 * ({@code soft/Receiver.java}), with {@code MemorySegment.copy} between registered regions instead of a socket:
 *
 * <ul>
 *   <li>SEND / SEND_WITH_IMM: no RECV posted: {@link MemQp#RNR}; RECV with a post-time error: that status at the
 *   responder, REM_OP_ERR at the requester; longer than the RECV: LOC_LEN_ERR at the responder, REM_INV_REQ_ERR at
 *   the requester; else gather into the RECV's scatter list, RECV completes with the length (and immediate).</li>
 *   <li>RDMA_WRITE(_WITH_IMM): WITH_IMM without a RECV: RNR; a length above 0 needs an open region of the
 *   responder's PD behind the rkey with REMOTE_WRITE covering {@code [remoteAddr, +len)}, else REM_ACCESS_ERR with
 *   nothing placed; WITH_IMM completes a RECV_RDMA_WITH_IMM.</li>
 *   <li>RDMA_READ: the same check with REMOTE_READ, then a copy into the requester's sink SGEs.</li>
 * </ul>
 *
 * A local region closed after the WR was posted fails it LOC_PROT_ERR before any byte moves. Returns
 * {@code 0} (success), {@link MemQp#RNR}, or the {@link WcStatus} ordinal of the requester's error completion.
 * Allocates nothing.
 */
final class MemTransfer {
    private MemTransfer() {
    }

    static int execute(MemQp q, int i, MemQp r) {
        if (!localOpen(q, i)) {
            return WcStatus.LOC_PROT_ERR.ordinal();
        }
        WrOpcode op = MemQp.WR_OPCODES[q.sqOpcode[i]];
        try {
            return switch (op) {
                case SEND, SEND_WITH_IMM, SEND_WITH_INV -> send(q, i, r, op == WrOpcode.SEND_WITH_IMM);
                case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(q, i, r, op == WrOpcode.RDMA_WRITE_WITH_IMM);
                case RDMA_READ -> read(q, i, r);
            };
        } catch (IllegalStateException e) {
            // a segment's arena was closed under a registered region: refuse, never touch freed memory
            return WcStatus.LOC_PROT_ERR.ordinal();
        }
    }

    private static boolean localOpen(MemQp q, int i) {
        if (q.sqInline[i]) {
            return true;
        }
        int base = i * q.maxSendSge;
        for (int j = 0; j < q.sqNumSge[i]; j++) {
            EmuMr mr = q.sqSgeMr[base + j];
            if (mr != null && mr.isClosed()) {
                return false;
            }
        }
        return true;
    }

    private static int send(MemQp q, int i, MemQp r, boolean withImm) {
        int len = q.sqTotal[i];
        int s = r.recvFor(len);
        if (s == EmuQp.RECV_NONE) {
            return MemQp.RNR;
        }
        if (s < 0) {
            return EmuQp.requesterStatus(s).ordinal();
        }
        int rb = s * r.maxRecvSge;
        for (int j = 0; j < r.rqNumSge[s]; j++) {
            EmuMr mr = r.rqSgeMr[rb + j];
            if (mr != null && mr.isClosed()) {
                r.completeRecv(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
                return WcStatus.REM_OP_ERR.ordinal();
            }
        }
        if (len > 0) {
            gatherScatter(q, i, r, s, len);
        }
        r.completeRecv(WcStatus.SUCCESS, WcOpcode.RECV, len, withImm, withImm ? q.sqImm[i] : 0);
        return 0;
    }

    private static int write(MemQp q, int i, MemQp r, boolean withImm) {
        if (withImm && !r.hasRecv()) {
            return MemQp.RNR;
        }
        int len = q.sqTotal[i];
        if (len > 0) {
            long raddr = q.sqRemoteAddr[i];
            EmuMr mr = r.pd.remote(q.sqRkey[i], raddr, len, Access.REMOTE_WRITE);
            if (mr == null) {
                return WcStatus.REM_ACCESS_ERR.ordinal();
            }
            MemorySegment dst = mr.segment();
            long off = raddr - mr.address();
            if (q.sqInline[i]) {
                MemorySegment.copy(q.inlineArea, (long) i * q.maxInline, dst, off, len);
            } else {
                int base = i * q.maxSendSge;
                for (int j = 0; j < q.sqNumSge[i]; j++) {
                    long n = Integer.toUnsignedLong(q.sqSgeLen[base + j]);
                    if (n > 0) {
                        EmuMr src = q.sqSgeMr[base + j];
                        MemorySegment.copy(src.segment(), q.sqSgeAddr[base + j] - src.address(), dst, off, n);
                        off += n;
                    }
                }
            }
        }
        if (withImm) {
            r.completeRecv(WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, len, true, q.sqImm[i]);
        }
        return 0;
    }

    private static int read(MemQp q, int i, MemQp r) {
        int len = q.sqTotal[i];
        if (len == 0) {
            return 0;
        }
        long raddr = q.sqRemoteAddr[i];
        EmuMr mr = r.pd.remote(q.sqRkey[i], raddr, len, Access.REMOTE_READ);
        if (mr == null) {
            return WcStatus.REM_ACCESS_ERR.ordinal();
        }
        MemorySegment src = mr.segment();
        long off = raddr - mr.address();
        int base = i * q.maxSendSge;
        for (int j = 0; j < q.sqNumSge[i]; j++) {
            long n = Integer.toUnsignedLong(q.sqSgeLen[base + j]);
            if (n > 0) {
                EmuMr dst = q.sqSgeMr[base + j];
                MemorySegment.copy(src, off, dst.segment(), q.sqSgeAddr[base + j] - dst.address(), n);
                off += n;
            }
        }
        return 0;
    }

    /** Copies {@code len} bytes from send slot {@code i} of {@code q} into RECV slot {@code s} of {@code r}. */
    private static void gatherScatter(MemQp q, int i, MemQp r, int s, long len) {
        boolean inline = q.sqInline[i];
        int sb = i * q.maxSendSge;
        int rb = s * r.maxRecvSge;
        int js = 0;
        int jd = 0;
        long offS = 0;
        long offD = 0;
        long rest = len;
        while (rest > 0) {
            MemorySegment srcSeg;
            long srcPos;
            long srcLen;
            if (inline) {
                srcSeg = q.inlineArea;
                srcPos = (long) i * q.maxInline;
                srcLen = q.sqTotal[i];
            } else {
                srcLen = Integer.toUnsignedLong(q.sqSgeLen[sb + js]);
                if (srcLen == 0) {
                    js++;
                    continue;
                }
                EmuMr m = q.sqSgeMr[sb + js];
                srcSeg = m.segment();
                srcPos = q.sqSgeAddr[sb + js] - m.address();
            }
            long dstLen = Integer.toUnsignedLong(r.rqSgeLen[rb + jd]);
            if (dstLen == 0) {
                jd++;
                continue;
            }
            EmuMr dm = r.rqSgeMr[rb + jd];
            long n = Math.min(Math.min(srcLen - offS, dstLen - offD), rest);
            MemorySegment.copy(srcSeg, srcPos + offS, dm.segment(), r.rqSgeAddr[rb + jd] - dm.address() + offD, n);
            offS += n;
            offD += n;
            rest -= n;
            if (offS == srcLen) {
                js++;
                offS = 0;
            }
            if (offD == dstLen) {
                jd++;
                offD = 0;
            }
        }
    }
}
