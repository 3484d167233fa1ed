package io.rdmablock.node.target;

import io.rdmablock.node.failover.AnaState;
import io.rdmablock.node.io.LocalVolumeIo;
import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.LogPageDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * NVMe ANA on the target (docs/failover.md, "Paths: NVMe ANA"; NVMe 1.4 §8.20, §5.14.1.12): the Identify fields, log
 * page 0Ch, ANA change notices, the I/O gate (SCT 3h) of a secondary and of an activating or lapsed primary, and the
 * associations a change of mode keeps (each queue re-opens its volume I/O once drained).
 */
class AnaTest extends TargetTestBase {
    static final String PRIMARY = "nqn.2026-11.io.rdmablock:node:primary-1";
    static final String OTHER_PRIMARY = "nqn.2026-11.io.rdmablock:node:primary-2";
    static final int INACCESSIBLE = NvmeStatus.of(3, 0x02, false);
    static final int TRANSITION = NvmeStatus.of(3, 0x03, false);
    static final long SLBA = 64;
    static final long WAIT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    Subsystem s;
    /** Hosts connected by {@link #admin(String)} and {@link #io(RawHost, String)}, closed after each test. */
    final List<RawHost> hosts = new ArrayList<>();

    @BeforeEach
    void setUp() {
        s = f.target.subsystemOfVolume("vol1");
        connect(TargetFixture.HOSTNQN, 0);
    }

    @AfterEach
    void tearDown() {
        TargetFixture.close(hosts.toArray(RawHost[]::new));
    }

    private RawHost admin(String hostnqn) {
        RawHost h = f.connect(0, 32, f.subnqn, hostnqn, 0xFFFF, 0);
        hosts.add(h);
        return h;
    }

    private RawHost io(RawHost admin, String hostnqn) {
        RawHost h = f.connect(1, 8, f.subnqn, hostnqn, TargetFixture.cntlid(admin), 0);
        hosts.add(h);
        return h;
    }

    /** WRITE of 8 blocks of {@code fill} at SLBA with {@code epoch} in CDW2-3; its status. */
    private static int write(RawHost h, int cid, int fill, long epoch) {
        return h.writeBlocks(cid, SLBA, fill, epoch).status();
    }

    /** READ of the 8 blocks at SLBA into host data offset 8192 (capsule slot 1); its status. */
    private static int read(RawHost h, int cid) {
        return h.readBlocks(1, cid, SLBA).status();
    }

    private static void assertStatus(int expected, int actual, String what) {
        assertEquals(expected, actual, what + ": " + NvmeStatus.describe(actual));
    }

    /** Get Log Page 0Ch into host data offset 0 ({@code lengthBytes} from {@code offsetBytes}), RGO as given. */
    private static RawHost.Cqe anaLog(RawHost h, int cid, boolean rgo, int lengthBytes, long offsetBytes) {
        MemorySegment c = h.capsule(0);
        LogPageDescriptor.sqe(c, cid, 0xFFFFFFFF, AnaLogDescriptor.LID_ANA, false, lengthBytes, offsetBytes);
        if (rgo) {
            SqeDescriptor.cdw(c, 10, SqeDescriptor.cdw(c, 10) | 1 << 8); // LSP bit 0
        }
        SglDescriptor.keyedInvalidate(SqeDescriptor.sgl1(c), h.dataAddress(0), lengthBytes, h.rkey());
        h.data().asSlice(0, lengthBytes).fill((byte) 0xEE);
        return h.exec(c);
    }

    /** The ANA state code of the one group descriptor in a full log page read (NVMe 1.4 Figure 197 byte 16). */
    private int anaStateOf(RawHost h, int cid) {
        assertEquals(0, anaLog(h, cid, false, 52, 0).status());
        return h.data().get(ValueLayout.JAVA_BYTE, 16 + 16) & 0x0F;
    }

    private long changeCountOf(RawHost h, int cid) {
        assertEquals(0, anaLog(h, cid, false, 52, 0).status());
        return h.data().get(U64, 0);
    }

    /** Set Features 0Bh with {@code config}. */
    private static void asyncEventConfig(RawHost h, int config) {
        MemorySegment c = h.nullSglCommand(0, Opcodes.ADMIN_SET_FEATURES, 40, 0);
        SqeDescriptor.cdw(c, 10, Opcodes.FID_ASYNC_EVENT_CONFIG);
        SqeDescriptor.cdw(c, 11, config);
        assertEquals(0, h.exec(c).status(), "Set Features 0Bh");
    }

    /** Posts an AER in capsule slot 2 (held by the controller). */
    private static void postAer(RawHost h, int cid) {
        h.nullSglCommand(2, Opcodes.ADMIN_ASYNC_EVENT_REQUEST, cid, 0);
        h.post(2, SqeDescriptor.LENGTH);
    }

    private static void await(BooleanSupplier condition, String what) {
        Await.until(condition, Duration.ofNanos(WAIT_NS), what);
    }

    // ---- Identify ----

    @Test
    void shouldAdvertiseAnaInIdentifyControllerAtTheNvme14Offsets() {
        assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status());
        MemorySegment d = admin.data();
        int cmic = d.get(ValueLayout.JAVA_BYTE, 76);
        assertEquals(1 << 1, cmic & 1 << 1, "CMIC bit 1: multiple controllers");
        assertEquals(1 << 3, cmic & 1 << 3, "CMIC bit 3: ANA reporting");
        assertEquals(1 << 8 | 1 << 11, d.get(U32, 92), "OAES: namespace attribute and ANA change notices");
        assertEquals(Identify.ANATT_SECONDS, d.get(ValueLayout.JAVA_BYTE, 342), "ANATT (byte 342)");
        assertTrue(Identify.ANATT_SECONDS > 0);
        int anacap = d.get(ValueLayout.JAVA_BYTE, 343) & 0xFF;
        assertEquals(0b1101_0101, anacap, "ANACAP (byte 343): optimized, inaccessible, change, grpid const+nonzero");
        assertEquals(1, d.get(U32, 344), "ANAGRPMAX (bytes 344..347)");
        assertEquals(1, d.get(U32, 348), "NANAGRPID (bytes 348..351)");
        assertEquals(1, d.get(U32, 540), "MNAN (bytes 540..543)");
        assertEquals(3, d.get(ValueLayout.JAVA_BYTE, IdentifyControllerDescriptor.AERL), "AERL (0-based)");
    }

    @Test
    void shouldPutTheNamespaceInAnaGroupOne() {
        assertEquals(0, admin.identify(Opcodes.CNS_NAMESPACE, 1).status());
        MemorySegment d = admin.data();
        assertEquals(1, IdentifyNamespaceDescriptor.nmic(d) & 1, "NMIC bit 0: shared");
        assertEquals(1, d.get(U32, 92), "ANAGRPID (bytes 92..95)");
    }

    @Test
    void shouldLeaveTheDiscoveryControllerWithoutAna() {
        try (RawHost h = f.host(0, 32)) {
            assertEquals(0, h.fabricConnect(31, 0, DiscoveryLogDescriptor.DISCOVERY_NQN,
                    TargetFixture.HOSTNQN, 0xFFFF).status());
            assertEquals(0, h.identify(Opcodes.CNS_CONTROLLER, 0).status());
            MemorySegment d = h.data();
            assertEquals(0, d.get(ValueLayout.JAVA_BYTE, 76), "CMIC");
            assertEquals(0, d.get(U32, 92), "OAES");
            assertEquals(0, d.get(ValueLayout.JAVA_BYTE, 343), "ANACAP");
            assertEquals(0, d.get(U32, 348), "NANAGRPID");
            RawHost.Cqe c = anaLog(h, 3, false, 52, 0);
            assertStatus(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), c.status(), "log 0Ch on discovery");
        }
    }

    // ---- log page 0Ch ----

    @Test
    void shouldReturnOneOptimizedGroupWithNamespaceOne() {
        RawHost.Cqe c = anaLog(admin, 10, false, 64, 0);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        MemorySegment d = admin.data();
        assertEquals(0, d.get(U64, 0), "header change count: nothing changed yet");
        assertEquals(1, d.get(U16, 8), "number of group descriptors");
        assertEquals(-1, d.asSlice(10, 6).mismatch(MemorySegment.ofArray(new byte[6])), "reserved 10..15");
        assertEquals(1, d.get(U32, 16), "ANAGRPID");
        assertEquals(1, d.get(U32, 20), "NNSID");
        assertEquals(0, d.get(U64, 24), "group change count");
        assertEquals(AnaState.OPTIMIZED.code(), d.get(ValueLayout.JAVA_BYTE, 32), "ANA state");
        assertEquals(-1, d.asSlice(33, 15).mismatch(MemorySegment.ofArray(new byte[15])), "reserved 33..47");
        assertEquals(1, d.get(U32, 48), "NSID list [1]");
        assertEquals(-1, d.asSlice(52, 12).mismatch(MemorySegment.ofArray(new byte[12])), "zeros past the log");
    }

    @Test
    void shouldLeaveOutTheNsidListWithReturnGroupsOnly() {
        s.secondaryOf(PRIMARY);
        RawHost.Cqe c = anaLog(admin, 11, true, 52, 0);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        MemorySegment d = admin.data();
        assertEquals(1, d.get(U16, 8), "one group");
        assertEquals(1, d.get(U32, 16), "ANAGRPID");
        assertEquals(0, d.get(U32, 20), "NNSID 0 with RGO");
        assertEquals(AnaState.INACCESSIBLE.code(), d.get(ValueLayout.JAVA_BYTE, 32), "ANA state");
        assertEquals(0, d.get(U32, 48), "no NSID list: zeros past the 48-byte log");
    }

    @Test
    void shouldServeAWindowOfTheLogAndRejectAnOffsetBeyondIt() {
        RawHost.Cqe c = anaLog(admin, 12, false, 8, 16);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertEquals(1, admin.data().get(U32, 0), "ANAGRPID at log offset 16");
        assertEquals(1, admin.data().get(U32, 4), "NNSID at log offset 20");
        c = anaLog(admin, 13, false, 4, 48);
        assertEquals(0, c.status());
        assertEquals(1, admin.data().get(U32, 0), "the NSID at log offset 48");
        assertStatus(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), anaLog(admin, 14, false, 4, 56).status(),
                "offset 56 > log length 52");
        assertStatus(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), anaLog(admin, 15, false, 4, 2).status(),
                "offset not dword aligned");
    }

    // ---- ANA change notices ----

    @Test
    void shouldSendAnAnaChangeNoticeWhenAPrimaryBecomesASecondary() {
        s.primary(LocalVolumeIo::open);
        long before = changeCountOf(admin, 20);
        asyncEventConfig(admin, 1 << 8 | 1 << 11);
        postAer(admin, 21);
        assertNull(admin.await(200_000_000L), "the AER is held while nothing changes");
        s.secondaryOf(PRIMARY);
        RawHost.Cqe aen = admin.awaitAnswer(WAIT_NS, 21, 0, "ANA change notice");
        assertEquals(0x02, aen.dw0() & 0x7, "type: notice");
        assertEquals(0x03, aen.dw0() >>> 8 & 0xFF, "info: ANA change");
        assertEquals(0x0C, aen.dw0() >>> 16 & 0xFF, "log page 0Ch");
        assertEquals(AnaState.INACCESSIBLE.code(), anaStateOf(admin, 22));
        assertTrue(changeCountOf(admin, 23) > before, "the change count grew");
    }

    @Test
    void shouldSendAnAnaChangeNoticeWhenActivatingAndWhenDone() {
        s.primary(LocalVolumeIo::open);
        asyncEventConfig(admin, 1 << 11);
        postAer(admin, 24);
        s.activating(true);
        admin.awaitAnswer(WAIT_NS, 24, 0, "notice of activating");
        assertEquals(AnaState.CHANGE.code(), anaStateOf(admin, 25));
        long during = changeCountOf(admin, 26);
        postAer(admin, 27);
        s.activating(false);
        RawHost.Cqe aen = admin.awaitAnswer(WAIT_NS, 27, 0, "notice of activation done");
        assertEquals(TargetController.AEN_ANA_CHANGE, aen.dw0());
        assertEquals(AnaState.OPTIMIZED.code(), anaStateOf(admin, 28));
        assertEquals(during + 1, changeCountOf(admin, 29));
    }

    @Test
    void shouldNotSendAnAnaChangeNoticeTheHostDidNotEnable() {
        asyncEventConfig(admin, 1 << 8);
        postAer(admin, 30);
        s.secondaryOf(PRIMARY);
        assertNull(admin.await(300_000_000L), "bit 11 not enabled: no notice");
    }

    @Test
    void shouldNoticeALeaseLapseWithoutAnyCommand() {
        s.primary(LocalVolumeIo::open);
        asyncEventConfig(admin, 1 << 11);
        postAer(admin, 31);
        long start = System.nanoTime();
        s.leaseDeadline(start + TimeUnit.MILLISECONDS.toNanos(300));
        RawHost.Cqe aen = admin.awaitAnswer(WAIT_NS, 31, 0, "notice of the lease lapse");
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300), "not before the lease end");
        assertEquals(TargetController.AEN_ANA_CHANGE, aen.dw0());
        assertEquals(AnaState.INACCESSIBLE, s.anaState(), "a lapsed lease has no bound: Inaccessible, not Change");
        assertEquals(AnaState.INACCESSIBLE.code(), anaStateOf(admin, 32));
    }

    // ---- the I/O gate ----

    @Test
    void shouldAnswerHostIoOnASecondaryInaccessibleAndServeThePrimaryNode() {
        s.secondaryOf(PRIMARY);
        RawHost primaryAdmin = admin(PRIMARY);
        RawHost primaryIo = io(primaryAdmin, PRIMARY);
        assertStatus(INACCESSIBLE, write(io, 1, 0x11, 3), "host WRITE on a secondary");
        assertStatus(INACCESSIBLE, read(io, 2), "host READ on a secondary");
        assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status(), "admin commands are not gated");
        assertEquals(AnaState.INACCESSIBLE.code(), anaStateOf(admin, 3), "the host sees Inaccessible");
        assertStatus(0, write(primaryIo, 4, 0x22, 3), "the primary node's WRITE with its epoch");
        assertStatus(0, read(primaryIo, 5), "the primary node's READ");
        assertEquals((byte) 0x22, primaryIo.data().get(ValueLayout.JAVA_BYTE, 8192), "the primary's write landed");
        assertEquals(AnaState.OPTIMIZED.code(), anaStateOf(primaryAdmin, 6), "the primary node sees Optimized");
        assertEquals(3, f.store.epoch("vol1"));
    }

    @Test
    void shouldAnswerTransitionWhileActivatingAndServeOnceDone() {
        s.primary(LocalVolumeIo::open);
        assertStatus(0, write(io, 1, 0x11, 0), "primary serves");
        s.activating(true);
        assertStatus(TRANSITION, write(io, 2, 0x22, 0), "WRITE while activating");
        assertStatus(TRANSITION, read(io, 3), "READ while activating");
        assertFalse(NvmeStatus.dnr(TRANSITION), "retryable");
        s.activating(false);
        assertStatus(0, read(io, 4), "served once activated");
        assertEquals((byte) 0x11, io.data().get(ValueLayout.JAVA_BYTE, 8192), "the write while activating was not run");
    }

    @Test
    void shouldAnswerInaccessiblePastTheLeaseAndServeOnceRenewed() {
        s.primary(LocalVolumeIo::open);
        s.leaseDeadline(System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
        assertStatus(0, write(io, 1, 0x11, 0), "within the lease");
        s.leaseDeadline(System.nanoTime() - 1);
        assertStatus(INACCESSIBLE, write(io, 2, 0x22, 0), "past the lease (judged by the clock at admission)");
        assertEquals(AnaState.INACCESSIBLE.code(), anaStateOf(admin, 3));
        s.leaseDeadline(System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
        assertStatus(0, read(io, 4), "lease renewed");
        assertEquals((byte) 0x11, io.data().get(ValueLayout.JAVA_BYTE, 8192));
        assertEquals(AnaState.OPTIMIZED.code(), anaStateOf(admin, 5));
    }

    @Test
    void shouldKeepServingANodesForwardedWritesWhenTheSecondaryLearnsOfANewPrimary() {
        s.secondaryOf(PRIMARY, java.util.Set.of(OTHER_PRIMARY)); // the management plane names both copies' nodes
        RawHost nodeAdmin = admin(OTHER_PRIMARY);
        RawHost nodeIo = io(nodeAdmin, OTHER_PRIMARY);
        assertStatus(0, write(nodeIo, 1, 0x33, 3), "a newly promoted primary's write with its epoch, before this "
                + "secondary heard of the promotion");
        s.secondaryOf(OTHER_PRIMARY); // the next heartbeat names it primary: same fence, no re-open, no Transition
        assertStatus(0, write(nodeIo, 2, 0x44, 3), "served across the change of primary");
        assertStatus(0, read(nodeIo, 3), "the node's READ");
        assertEquals((byte) 0x44, nodeIo.data().get(ValueLayout.JAVA_BYTE, 8192));
    }

    @Test
    void shouldRefuseANodeAsAHostOfAPrimary() {
        s.primary(LocalVolumeIo::open);
        assertFalse(s.allowsHost(OTHER_PRIMARY), "a node forwards to secondaries only");
        assertTrue(s.allowsHost("nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001"));
    }

    @Test
    void shouldNotGateAPlainVolumeWithALapsedLease() {
        s.leaseDeadline(System.nanoTime() - 1);
        assertStatus(0, write(io, 1, 0x11, 0), "the lease applies to a primary only");
        assertEquals(AnaState.OPTIMIZED, s.anaState());
    }

    // ---- mode changes keep associations ----

    @Test
    void shouldKeepTheHostsAssociationAcrossModeChangesAndUseTheNewMode() throws InterruptedException {
        assertStatus(0, write(io, 1, 0x11, 0), "plain");
        s.secondaryOf(PRIMARY);
        assertStatus(INACCESSIBLE, write(io, 2, 0x22, 0), "the same queue, now on a secondary");
        assertTrue(f.target.connectedHosts("vol1").contains(TargetFixture.HOSTNQN), "association kept");
        AtomicInteger opened = new AtomicInteger();
        s.primary(c -> {
            opened.incrementAndGet();
            return LocalVolumeIo.open(c);
        });
        assertStatus(0, read(io, 3), "the same queue, now on the primary");
        assertEquals((byte) 0x11, io.data().get(ValueLayout.JAVA_BYTE, 8192));
        assertEquals(1, opened.get(), "the queue re-opened its volume I/O from the primary's factory");
        assertStatus(0, write(io, 4, 0x33, 0), "primary write");
        assertEquals(1, opened.get(), "once");
        assertEquals(null, io.error(), "no transport error on the host's queue");
        assertTrue(f.target.connectedHosts("vol1").contains(TargetFixture.HOSTNQN), "association kept");
    }

    @Test
    void shouldEndThePreviousPrimarysAssociationWhenThePrimaryChanges() throws InterruptedException {
        s.secondaryOf(PRIMARY);
        RawHost primaryAdmin = admin(PRIMARY);
        RawHost primaryIo = io(primaryAdmin, PRIMARY);
        assertStatus(0, write(primaryIo, 1, 0x11, 2), "primary-1 writes");
        s.secondaryOf(OTHER_PRIMARY);
        await(() -> !f.target.connectedHosts("vol1").contains(PRIMARY), "primary-1's association ended");
        assertTrue(f.target.connectedHosts("vol1").contains(TargetFixture.HOSTNQN), "the host's association kept");
        RawHost otherAdmin = admin(OTHER_PRIMARY);
        RawHost otherIo = io(otherAdmin, OTHER_PRIMARY);
        assertStatus(0, write(otherIo, 2, 0x22, 3), "primary-2 writes with its epoch");
        assertStatus(INACCESSIBLE, read(io, 3), "the host is still gated");
    }

    /** A volume I/O that can hold one command in flight until released. */
    static final class HoldingIo extends ForwardingVolumeIo {
        final AnaTest test;
        Request held;

        HoldingIo(VolumeIo.Context c, AnaTest test) {
            super(c);
            this.test = test;
        }

        @Override
        public int start(Request r, long nowNs) {
            if (test.holdNext) {
                test.holdNext = false;
                held = r;
                test.holding = true;
                return IN_FLIGHT;
            }
            return local.start(r, nowNs);
        }

        @Override
        public int poll(Completions sink, int max, long nowNs) {
            int n = local.poll(sink, max, nowNs);
            if (held != null && test.release) {
                Request r = held;
                held = null;
                test.holding = false;
                sink.completed(r, 0);
                n++;
            }
            return n;
        }

        @Override
        public int inFlight() {
            return local.inFlight() + (held == null ? 0 : 1);
        }
    }

    volatile boolean holdNext;
    volatile boolean holding;
    volatile boolean release;

    @Test
    void shouldAnswerTransitionUntilTheOldVolumeIoDrainedThenTheNewMode() throws InterruptedException {
        AtomicInteger opened = new AtomicInteger();
        s.primary(c -> {
            opened.incrementAndGet();
            return new HoldingIo(c, this);
        });
        assertStatus(0, read(io, 1), "primary");
        assertEquals(1, opened.get());
        holdNext = true;
        io.data().asSlice(0, 4096).fill((byte) 0x44);
        io.rw(0, Opcodes.IO_WRITE, 100, SLBA, 8, false, 0, 4096);
        io.post(0, SqeDescriptor.LENGTH);
        await(() -> holding, "the WRITE is held in the primary's volume I/O");
        s.secondaryOf(PRIMARY);
        assertStatus(TRANSITION, read(io, 2), "the old handle still has a command in flight");
        release = true;
        RawHost.Cqe w = io.await(WAIT_NS);
        assertEquals(0, w == null ? -1 : w.status(), "the held command completes");
        assertEquals(100, w.cid());
        await(() -> !holding, "released");
        assertStatus(INACCESSIBLE, read(io, 3), "the queue re-opened under the secondary mode");
        assertEquals(1, opened.get(), "the secondary's factory is not the primary's");
    }
}
