package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the queue tests share: a strict (nvmet-like) {@link FakeTarget} on the soft provider, a protection domain
 * with a 64 KiB registered buffer the target may RDMA READ, the association to it, and the completions a handler
 * recorded (preallocated: the handler allocates nothing). The subclass hands its queue over with {@link #use}.
 */
abstract class QueueFixture {
    static final String SUBNQN = "nqn.2026-11.io.rdmablock:volume:peer";
    static final String HOSTNQN = "nqn.2026-11.io.rdmablock:node:primary";
    static final int LBA = 512;
    static final int ENTRIES = 8;
    static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    VerbsProvider provider;
    FakeTarget target;
    InetSocketAddress address;
    CmId routeId;
    ProtectionDomain pd;
    Arena arena;
    MemorySegment data;
    MemoryRegion dataMr;
    PeerAssociation association;
    final NvmCommand cmd = new NvmCommand();
    final int[] tags = new int[64];
    final int[] statuses = new int[64];
    int completions;

    /** The queue under test, or null; closed before the association. */
    private AutoCloseable queueUnderTest;
    /** One poll of the queue under test ({@code nowNs} -> completions delivered). */
    private java.util.function.LongToIntFunction poll;

    /** Makes {@code queue} the queue under test: {@link #pollUntil} polls it, tear-down closes it. */
    void use(AutoCloseable queue, java.util.function.LongToIntFunction poll) {
        this.queueUnderTest = queue;
        this.poll = poll;
    }

    @BeforeEach
    void setUpTarget() {
        provider = Providers.select("soft");
        target = new FakeTarget(provider, SUBNQN, 16L << 20, 16L << 20, LBA, 128 << 10, true).nvmetLike();
        address = target.start();
        routeId = provider.createId();
        routeId.resolve(address, TimeUnit.SECONDS.toNanos(5));
        pd = routeId.device().allocPd();
        arena = Arena.ofShared();
        data = arena.allocate(64 << 10, 4096);
        // the primary's request buffer: registered on the association's PD, readable by the peer
        dataMr = pd.registerMemory(data, Access.LOCAL_WRITE | Access.REMOTE_READ);
    }

    @AfterEach
    void tearDownTarget() throws Exception {
        CountDownLatch hold = target.holdResponses;
        if (hold != null) {
            hold.countDown();
        }
        if (queueUnderTest != null) {
            queueUnderTest.close();
        }
        if (association != null) {
            association.close();
        }
        target.close();
        dataMr.close();
        arena.close();
        pd.close();
        routeId.close();
        provider.close();
    }

    /** Connects {@link #association} (one I/O queue of {@link #ENTRIES} entries). */
    void connectAssociation() {
        association = PeerAssociation.connect(provider, pd, new PeerAssociation.Params(address, SUBNQN, HOSTNQN, 1,
                ENTRIES, 10_000, TimeUnit.SECONDS.toNanos(5)));
    }

    /** The handler of the queue under test: records tag and status. */
    void record(int tag, int status) {
        tags[completions] = tag;
        statuses[completions] = status;
        completions++;
    }

    /** A WRITE of {@code blocks} blocks at {@code slba} from {@code data} at {@code offset}, epoch 7. */
    NvmCommand write(long slba, int blocks, long offset) {
        return cmd.clear().opcode(Opcodes.IO_WRITE).nsid(1).epoch(7).slba(slba).cdw(12, blocks - 1)
                .keyedSgl(data.address() + offset, blocks * LBA, dataMr.rkey());
    }

    /** Polls with the real clock until {@code n} completions arrived or the deadline passed. */
    void pollUntil(int n) {
        long deadline = System.nanoTime() + WAIT_NS;
        while (completions < n && System.nanoTime() - deadline < 0) {
            if (poll.applyAsInt(System.nanoTime()) == 0) {
                Thread.onSpinWait();
            }
        }
        assertEquals(n, completions, "completions within " + WAIT_NS / 1_000_000 + " ms");
    }
}
