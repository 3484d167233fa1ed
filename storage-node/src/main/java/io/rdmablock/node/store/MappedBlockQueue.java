package io.rdmablock.node.store;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@link BlockQueue} every caller gets: commands on flat volumes pass straight to the backend queue; commands on
 * mapped volumes ({@link ClusterMap}) are cut at cluster boundaries into pieces, each translated to its physical
 * cluster. This class holds the one request state machine of a mapped command (docs/snapshots.md, "Write path"):
 *
 * <pre>
 * piece of a READ      unallocated: zero-filled at once | allocated: backend READ -> done
 * piece of a WRITE     exclusive cluster: backend WRITE in place -> done
 *                      unallocated, or shared with a snapshot: mark BUSY, take a new cluster,
 *                        [shared and partial: worker copies the rest of the old cluster] -> backend WRITE
 *                        -> worker commits the map entry -> publish (BUSY cleared) -> done
 * piece of a TRIM or   unallocated: done | whole cluster: BUSY -> commit "unallocated" -> publish -> done
 *   WRITE ZEROES       part of an exclusive cluster: backend TRIM/WRITE ZEROES in place -> done
 *                      part of a shared cluster: BUSY, new cluster, copy the rest (the range stays a hole) -> commit
 * FLUSH                backend FLUSH (fdatasync) -> worker syncs the map -> done
 * </pre>
 *
 * A piece that meets a BUSY cluster (another command is changing it) waits: its command is parked and retried at
 * every {@link #reap}; pieces are taken in ascending cluster order and a command holds BUSY only on clusters below
 * the one it waits for, so waits cannot form a cycle. A failed piece gives its new cluster back and leaves the entry
 * as it was; the command completes with the first error. Not thread-safe (the owning poller), like every queue;
 * the worker's answers arrive on a lock-free inbox.
 */
final class MappedBlockQueue implements BlockQueue {
    private static final int READ = 1;
    private static final int WRITE = 2;
    private static final int FLUSH = 3;
    private static final int ZEROES = 4;
    private static final int TRIM = 5;

    /** Piece stages: what the piece waits for. */
    private static final int RAW = 1;
    private static final int COPY = 2;
    private static final int RAW_THEN_COMMIT = 3;
    private static final int COMMIT = 4;
    private static final int RAW_THEN_SYNC = 5;
    private static final int SYNC = 6;

    private final BlockQueue raw;
    private final MapWorker worker;
    private final int capacity;
    private final int pieceCapacity;

    private final long[] cUd;
    private final int[] cKind;
    private final StoreVolume[] cVol;
    private final long[] cOff;
    private final long[] cEnd;
    private final long[] cCursor;
    private final MemorySegment[] cBuf;
    private final boolean[] cFua;
    private final int[] cPieces;
    private final int[] cResult;
    /** The barrier phase a write-type command was admitted into (exited at completion); null before admission. */
    private final CutGate.Phase[] cPhase;
    private final int[] cFree;
    private int cFreeTop;
    /** Commands waiting for a piece or a busy cluster, in arrival order. */
    private final int[] parked;
    private int parkedCount;

    private final int[] pCmd;
    private final int[] pStage;
    private final long[] pCluster;
    private final long[] pOld;
    private final long[] pNew;
    private final long[] pPhysOff;
    private final long[] pBufOff;
    private final long[] pLen;
    private final int[] pFree;
    private int pFreeTop;
    /** Pieces of commands on mapped volumes, at most {@link #mappedLimit}: one piece per command stays for flat ones. */
    private int mappedPieces;
    private final int mappedLimit;
    private final boolean[] pMapped;
    private int workerPending;

    private final long[] doneUd;
    private final int[] doneRes;
    private int doneHead;
    private int doneCount;
    private int inFlight;

    private final long[] rawUd;
    private final int[] rawRes;
    private final ConcurrentLinkedQueue<Long> inbox = new ConcurrentLinkedQueue<>();

    MappedBlockQueue(BlockQueue raw, MapWorker worker, int capacity) {
        this.raw = raw;
        this.worker = worker;
        this.capacity = capacity;
        this.pieceCapacity = raw.capacity();
        this.mappedLimit = Math.max(1, pieceCapacity - capacity);
        this.pMapped = new boolean[pieceCapacity];
        cUd = new long[capacity];
        cKind = new int[capacity];
        cVol = new StoreVolume[capacity];
        cOff = new long[capacity];
        cEnd = new long[capacity];
        cCursor = new long[capacity];
        cBuf = new MemorySegment[capacity];
        cFua = new boolean[capacity];
        cPieces = new int[capacity];
        cResult = new int[capacity];
        cPhase = new CutGate.Phase[capacity];
        cFree = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            cFree[cFreeTop++] = capacity - 1 - i;
        }
        parked = new int[capacity];
        pCmd = new int[pieceCapacity];
        pStage = new int[pieceCapacity];
        pCluster = new long[pieceCapacity];
        pOld = new long[pieceCapacity];
        pNew = new long[pieceCapacity];
        pPhysOff = new long[pieceCapacity];
        pBufOff = new long[pieceCapacity];
        pLen = new long[pieceCapacity];
        pFree = new int[pieceCapacity];
        for (int i = 0; i < pieceCapacity; i++) {
            pFree[pFreeTop++] = pieceCapacity - 1 - i;
        }
        doneUd = new long[capacity];
        doneRes = new int[capacity];
        rawUd = new long[pieceCapacity];
        rawRes = new int[pieceCapacity];
    }

    // ---- BlockQueue ----

    @Override
    public void submitRead(StoreVolume volume, long offsetBytes, MemorySegment buf, long userData) {
        start(READ, volume, offsetBytes, buf == null ? -1 : buf.byteSize(), buf, false, userData);
    }

    @Override
    public void submitWrite(StoreVolume volume, long offsetBytes, MemorySegment buf, boolean fua, long userData) {
        start(WRITE, volume, offsetBytes, buf == null ? -1 : buf.byteSize(), buf, fua, userData);
    }

    @Override
    public void submitFlush(StoreVolume volume, long userData) {
        start(FLUSH, volume, 0, 0, null, false, userData);
    }

    @Override
    public void submitWriteZeroes(StoreVolume volume, long offsetBytes, long lengthBytes, long userData) {
        start(ZEROES, volume, offsetBytes, lengthBytes, null, false, userData);
    }

    @Override
    public void submitTrim(StoreVolume volume, long offsetBytes, long lengthBytes, long userData) {
        start(TRIM, volume, offsetBytes, lengthBytes, null, false, userData);
    }

    @Override
    public void registerBuffers(MemorySegment... regions) {
        raw.registerBuffers(regions);
    }

    @Override
    public int submit() {
        return raw.submit();
    }

    @Override
    public int reap(long[] userData, int[] result, int max) {
        pump();
        int limit = Math.min(max, Math.min(userData.length, result.length));
        int n = 0;
        while (doneCount > 0 && n < limit) {
            userData[n] = doneUd[doneHead];
            result[n] = doneRes[doneHead];
            doneHead = doneHead + 1 == capacity ? 0 : doneHead + 1;
            doneCount--;
            inFlight--;
            n++;
        }
        return n;
    }

    @Override
    public boolean awaitCompletion(long timeoutNs) {
        pump();
        if (doneCount > 0) {
            return true;
        }
        long deadline = System.nanoTime() + timeoutNs;
        while (doneCount == 0 && inFlight > 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            if (workerPending > 0 || parkedCount > 0) {
                // the worker's answers and busy clusters do not wake the backend's wait: poll in short slices
                long slice = Math.min(left, 100_000L);
                if (raw.inFlight() > 0) {
                    raw.awaitCompletion(slice);
                } else {
                    LockSupport.parkNanos(slice);
                }
            } else {
                raw.awaitCompletion(left);
            }
            pump();
        }
        return doneCount > 0;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int inFlight() {
        return inFlight;
    }

    @Override
    public IoBackend backend() {
        return raw.backend();
    }

    @Override
    public void close() {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (inFlight - doneCount > 0 && System.nanoTime() < deadline) {
            awaitCompletion(100_000_000L);
            pump();
        }
        raw.close();
    }

    /** The worker finished a task of piece {@code piece}: {@code result} 0 or -errno. Any thread. */
    void workerDone(int piece, int result) {
        inbox.offer(((long) piece << 32) | (result & 0xffffffffL));
    }

    // ---- the state machine ----

    private void start(int kind, StoreVolume v, long off, long len, MemorySegment buf, boolean fua, long ud) {
        if (inFlight >= capacity) {
            throw new IllegalStateException("block queue full: inFlight=" + inFlight + ", capacity=" + capacity);
        }
        ClusterMap map = v == null ? null : v.map();
        if (map == null) {
            startFlat(kind, v, off, buf, len, fua, ud);
            return;
        }
        if (kind == READ || kind == WRITE) {
            checkBuffer(kind == READ ? "read" : "write", buf);
        }
        if (kind != FLUSH) {
            checkRange(v, off, len);
        }
        int cmd = cFree[--cFreeTop];
        inFlight++;
        cUd[cmd] = ud;
        cKind[cmd] = kind;
        cVol[cmd] = v;
        cOff[cmd] = off;
        cEnd[cmd] = off + len;
        cCursor[cmd] = off;
        cBuf[cmd] = buf;
        cFua[cmd] = fua;
        cPieces[cmd] = 0;
        cResult[cmd] = 0;
        if (v.isDeleted() || (v.isReadOnly() && kind != READ && kind != FLUSH)) {
            cResult[cmd] = v.isDeleted() ? -Syscalls.ENXIO : -Syscalls.EROFS;
            cCursor[cmd] = cEnd[cmd];
        }
        if (!advance(cmd)) {
            parked[parkedCount++] = cmd;
        }
    }

    /** A flat volume: one piece, the backend does the rest (it validates the arguments). */
    private void startFlat(int kind, StoreVolume v, long off, MemorySegment buf, long len, boolean fua, long ud) {
        if (pFreeTop == 0) {
            pump(); // every piece is taken by mapped commands: collect completions first
            if (pFreeTop == 0) {
                throw new IllegalStateException("block queue full: pieces in flight=" + pieceCapacity);
            }
        }
        int piece = pFree[pFreeTop - 1];
        switch (kind) {
            case READ -> raw.submitRead(v, off, buf, piece);
            case WRITE -> raw.submitWrite(v, off, buf, fua, piece);
            case FLUSH -> raw.submitFlush(v, piece);
            case ZEROES -> raw.submitWriteZeroes(v, off, len, piece);
            default -> raw.submitTrim(v, off, len, piece);
        }
        pFreeTop--; // taken only once the backend accepted the arguments
        int cmd = cFree[--cFreeTop];
        inFlight++;
        cUd[cmd] = ud;
        cKind[cmd] = kind;
        cVol[cmd] = v;
        cCursor[cmd] = 1; // issued: nothing more for advance()
        cEnd[cmd] = 1;
        cPieces[cmd] = 1;
        cResult[cmd] = 0;
        pCmd[piece] = cmd;
        pStage[piece] = RAW;
    }

    /** Issues the pieces of {@code cmd} from its cursor on; false when it must wait (parked). */
    private boolean advance(int cmd) {
        StoreVolume v = cVol[cmd];
        ClusterMap map = v.map();
        int k = cKind[cmd];
        if (cPhase[cmd] == null && (k == WRITE || k == ZEROES || k == TRIM) && v.cutGate != null
                && cCursor[cmd] < cEnd[cmd]) {
            cPhase[cmd] = v.cutGate.admit(); // a snapshot barrier is passing: wait, touching nothing
            if (cPhase[cmd] == null) {
                return false;
            }
        }
        if (cKind[cmd] == FLUSH) {
            if (cCursor[cmd] == 0 && cResult[cmd] == 0) {
                if (!pieceForMapped()) {
                    return false;
                }
                int piece = takePiece(cmd, RAW_THEN_SYNC);
                cCursor[cmd] = 1;
                raw.submitFlush(v, piece);
            }
            return finishIfDone(cmd);
        }
        int shift = map.clusterShift();
        long cb = 1L << shift;
        while (cCursor[cmd] < cEnd[cmd]) {
            if (!pieceForMapped()) {
                return false;
            }
            long at = cCursor[cmd];
            long c = at >>> shift;
            long inner = at & (cb - 1);
            long n = Math.min(cEnd[cmd] - at, cb - inner);
            long e = map.entry(c);
            if ((e & ClusterMap.BUSY) != 0) {
                return false;
            }
            long phys = (e & ClusterMap.PHYS_MASK) - 1;
            boolean shared = (e & ClusterMap.SHARED) != 0;
            int kind = cKind[cmd];
            if (kind == READ) {
                if (e == 0) {
                    cBuf[cmd].asSlice(at - cOff[cmd], n).fill((byte) 0);
                } else {
                    int piece = takePiece(cmd, RAW);
                    raw.submitRead(v, phys * cb + inner, cBuf[cmd].asSlice(at - cOff[cmd], n), piece);
                }
            } else if (kind == WRITE && e != 0 && !shared) {
                // FUA: the cluster's entry may have been committed unsynced; then the map is synced before completion
                int piece = takePiece(cmd, cFua[cmd] && worker.mapUnsynced() ? RAW_THEN_SYNC : RAW);
                raw.submitWrite(v, phys * cb + inner, cBuf[cmd].asSlice(at - cOff[cmd], n), cFua[cmd], piece);
            } else if (kind != WRITE && (e == 0 || (n < cb && !shared))) {
                if (e != 0) {
                    int piece = takePiece(cmd, RAW);
                    if (kind == ZEROES) {
                        raw.submitWriteZeroes(v, phys * cb + inner, n, piece);
                    } else {
                        raw.submitTrim(v, phys * cb + inner, n, piece);
                    }
                }
            } else if (!changeEntry(cmd, v, map, c, e, inner, n, cb)) {
                continue; // lost the race for the entry: look at it again
            }
            cCursor[cmd] = at + n;
        }
        return finishIfDone(cmd);
    }

    /**
     * Starts a map change of cluster {@code c} (entry {@code e}) for piece range {@code [inner, inner + n)}: a write
     * into a new cluster, a copy of the kept part of a shared one, or a whole-cluster deallocation. False when another
     * command took the entry first.
     */
    private boolean changeEntry(int cmd, StoreVolume v, ClusterMap map, long c, long e, long inner, long n, long cb) {
        if (!map.tryBusy(c, e)) {
            return false;
        }
        boolean write = cKind[cmd] == WRITE;
        if (!write && n == cb) {
            int piece = takePiece(cmd, COMMIT);
            setPiece(piece, c, e, -1, 0, 0, 0);
            workerPending++;
            worker.commit(v, this, piece, c, -1, false);
            return true;
        }
        long fresh = map.allocate();
        int grown = v.ensureFileBytes(fresh);
        int piece = takePiece(cmd, RAW);
        setPiece(piece, c, e, fresh, fresh * cb + inner, cCursor[cmd] - cOff[cmd], n);
        if (grown < 0) {
            abortChange(piece);
            finishPiece(piece, grown);
            return true;
        }
        if (e != 0 && n < cb) {
            pStage[piece] = COPY;
            workerPending++;
            long old = ((e & ClusterMap.PHYS_MASK) - 1) * cb;
            worker.copy(v, this, piece, old, fresh * cb, inner, inner + n, cb - inner - n);
        } else if (write) {
            issueWrite(piece);
        } else {
            pStage[piece] = COMMIT; // a whole shared cluster cannot get here (n == cb handled above)
            workerPending++;
            worker.commit(v, this, piece, c, fresh, false);
        }
        return true;
    }

    private void issueWrite(int piece) {
        int cmd = pCmd[piece];
        pStage[piece] = RAW_THEN_COMMIT;
        // a redirect's data is written durably: its map entry is then committed without a sync (MapWorker)
        boolean dsync = cFua[cmd] || pOld[piece] != 0;
        raw.submitWrite(cVol[cmd], pPhysOff[piece], cBuf[cmd].asSlice(pBufOff[piece], pLen[piece]), dsync, piece);
    }

    /** Collects backend completions and worker answers, then retries parked commands. */
    private void pump() {
        Long w;
        while ((w = inbox.poll()) != null) {
            workerPending--;
            onWorker((int) (w >>> 32), (int) (long) w);
        }
        int n = raw.reap(rawUd, rawRes, pieceCapacity);
        for (int i = 0; i < n; i++) {
            onRaw((int) rawUd[i], rawRes[i]);
        }
        if (parkedCount > 0) {
            int kept = 0;
            for (int i = 0; i < parkedCount; i++) {
                int cmd = parked[i];
                if (!advance(cmd)) {
                    parked[kept++] = cmd;
                }
            }
            parkedCount = kept;
        }
        raw.submit();
    }

    private void onRaw(int piece, int res) {
        int cmd = pCmd[piece];
        switch (pStage[piece]) {
            case RAW_THEN_COMMIT -> {
                if (res < 0) {
                    abortChange(piece);
                    finishPiece(piece, res);
                } else {
                    pStage[piece] = COMMIT;
                    workerPending++;
                    worker.commit(cVol[cmd], this, piece, pCluster[piece], pNew[piece], cFua[cmd]);
                }
            }
            case RAW_THEN_SYNC -> {
                if (res < 0) {
                    finishPiece(piece, res);
                } else {
                    pStage[piece] = SYNC;
                    workerPending++;
                    worker.sync(this, piece);
                }
            }
            default -> finishPiece(piece, res);
        }
    }

    private void onWorker(int piece, int res) {
        int cmd = pCmd[piece];
        switch (pStage[piece]) {
            case COPY -> {
                if (res < 0) {
                    abortChange(piece);
                    finishPiece(piece, res);
                } else if (cKind[cmd] == WRITE) {
                    issueWrite(piece);
                } else {
                    pStage[piece] = COMMIT;
                    workerPending++;
                    worker.commit(cVol[cmd], this, piece, pCluster[piece], pNew[piece], false);
                }
            }
            case COMMIT -> {
                if (res < 0) {
                    abortChange(piece);
                } else {
                    cVol[cmd].map().publish(pCluster[piece], pOld[piece], pNew[piece]);
                }
                finishPiece(piece, res);
            }
            default -> finishPiece(piece, res);
        }
    }

    /** Undoes a map change that will not be published: the new cluster goes back, the entry is left as it was. */
    private void abortChange(int piece) {
        ClusterMap map = cVol[pCmd[piece]].map();
        if (pNew[piece] >= 0) {
            map.unallocate(pNew[piece]);
        }
        map.unbusy(pCluster[piece]);
    }

    /** True when a command on a mapped volume may take a piece now. */
    private boolean pieceForMapped() {
        return pFreeTop > 0 && mappedPieces < mappedLimit;
    }

    /** Takes a piece for a command on a mapped volume (checked with {@link #pieceForMapped}). */
    private int takePiece(int cmd, int stage) {
        int piece = pFree[--pFreeTop];
        pMapped[piece] = true;
        mappedPieces++;
        pCmd[piece] = cmd;
        pStage[piece] = stage;
        pNew[piece] = -1;
        cPieces[cmd]++;
        return piece;
    }

    private void setPiece(int piece, long c, long old, long fresh, long physOff, long bufOff, long len) {
        pCluster[piece] = c;
        pOld[piece] = old;
        pNew[piece] = fresh;
        pPhysOff[piece] = physOff;
        pBufOff[piece] = bufOff;
        pLen[piece] = len;
    }

    private void finishPiece(int piece, int res) {
        int cmd = pCmd[piece];
        pFree[pFreeTop++] = piece;
        if (pMapped[piece]) {
            pMapped[piece] = false;
            mappedPieces--;
        }
        if (res < 0 && cResult[cmd] == 0) {
            cResult[cmd] = res;
        }
        cPieces[cmd]--;
        finishIfDone(cmd);
    }

    /** Completes {@code cmd} when every piece is issued and done; true when it needs nothing more from advance. */
    private boolean finishIfDone(int cmd) {
        boolean issued = cKind[cmd] == FLUSH ? cCursor[cmd] != 0 || cResult[cmd] != 0 : cCursor[cmd] >= cEnd[cmd];
        if (issued && cPieces[cmd] == 0 && cVol[cmd] != null) {
            int tail = doneHead + doneCount;
            if (tail >= capacity) {
                tail -= capacity;
            }
            doneUd[tail] = cUd[cmd];
            doneRes[tail] = cResult[cmd];
            doneCount++;
            if (cPhase[cmd] != null) {
                cPhase[cmd].exit();
                cPhase[cmd] = null;
            }
            cVol[cmd] = null;
            cBuf[cmd] = null;
            cFree[cFreeTop++] = cmd;
        }
        return issued;
    }

    private static void checkBuffer(String op, MemorySegment buf) {
        if (buf == null || !buf.isNative()) {
            throw new IllegalArgumentException("invalid buf: " + op + " needs a native segment, buf=" + buf);
        }
        if (buf.byteSize() > MAX_TRANSFER_BYTES) {
            throw new IllegalArgumentException("invalid lengthBytes: op=" + op + ", lengthBytes=" + buf.byteSize()
                    + ", max=" + MAX_TRANSFER_BYTES);
        }
    }

    private static void checkRange(StoreVolume v, long off, long len) {
        long size = v.sizeBytes();
        int lba = v.lbaSizeBytes();
        if (off < 0 || len < 0 || off % lba != 0 || len % lba != 0 || len > size || off > size - len) {
            throw new IllegalArgumentException("invalid range: offsetBytes=" + off + ", lengthBytes=" + len
                    + ", sizeBytes=" + size + ", lbaSizeBytes=" + lba
                    + " (offset and length must be LBA multiples within the volume)");
        }
    }
}
