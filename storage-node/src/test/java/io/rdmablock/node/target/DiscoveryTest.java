package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.LogPageDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The node's discovery controller (NVMe-oF 1.1 section 5): what {@code nvme discover -t rdma} (nvme-cli 2.x, libnvme
 * {@code nvmf_get_discovery_log}: header first, then the entries in 4096-byte chunks) reads.
 */
class DiscoveryTest {
    static final String OTHER = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000002";
    @TempDir
    Path dir;
    TargetFixture f;
    String openNqn;
    String otherNqn;

    @BeforeEach
    void setUp() {
        f = new TargetFixture(dir, TargetOptions.defaults(), 8L << 20, 512, Set.of(TargetFixture.HOSTNQN));
        StoreVolume open = f.store.create(new VolumeSpec("vol2", "vol2", 8L << 20, 512, Set.of("*")));
        openNqn = f.target.addVolume(open, null).subnqn();
        StoreVolume other = f.store.create(new VolumeSpec("vol3", "vol3", 8L << 20, 512, Set.of(OTHER)));
        otherNqn = f.target.addVolume(other, null).subnqn();
    }

    @AfterEach
    void tearDown() {
        f.close();
    }

    private RawHost discovery(String hostnqn) {
        RawHost h = f.host(0, 32);
        RawHost.Cqe c = h.fabricConnect(31, 0, DiscoveryLogDescriptor.DISCOVERY_NQN, hostnqn, 0xFFFF);
        assertEquals(0, c.status(), "discovery connect: " + NvmeStatus.describe(c.status()));
        return h;
    }

    /** The whole log as libnvme reads it: the header, then header and entries again from offset 0. */
    private static List<DiscoveryLogDescriptor.Entry> entries(RawHost h) {
        assertEquals(0, h.getLogPage(2, LogPageDescriptor.LID_DISCOVERY, 0, 1024, 0, true).status());
        long numrec = DiscoveryLogDescriptor.numrec(h.data());
        int len = (int) (1024 + numrec * 1024);
        RawHost.Cqe c = h.getLogPage(3, LogPageDescriptor.LID_DISCOVERY, 0, len, 0, false);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        List<DiscoveryLogDescriptor.Entry> out = new ArrayList<>();
        for (int i = 0; i < numrec; i++) {
            out.add(DiscoveryLogDescriptor.entry(h.data().asSlice(1024 + 1024L * i, 1024)));
        }
        return out;
    }

    private static List<String> subnqns(List<DiscoveryLogDescriptor.Entry> entries) {
        return entries.stream().map(DiscoveryLogDescriptor.Entry::subnqn).toList();
    }

    @Test
    void shouldConnectToTheWellKnownDiscoveryNqnWithAnyHostnqn() {
        try (RawHost h = discovery("nqn.2014-08.org.example:not-on-any-allow-list")) {
            assertEquals(1, f.target.controllerCount());
        }
    }

    @Test
    void shouldIdentifyAsADiscoveryController() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            RawHost.Cqe c = h.identify(Opcodes.CNS_CONTROLLER, 0);
            assertEquals(0, c.status());
            MemorySegment d = h.data();
            assertEquals(IdentifyControllerDescriptor.CNTRLTYPE_DISCOVERY, IdentifyControllerDescriptor.cntrltype(d));
            IdentifyControllerDescriptor.Info info = IdentifyControllerDescriptor.decode(d);
            assertEquals(DiscoveryLogDescriptor.DISCOVERY_NQN, info.subnqn(), "nvmf_create_ctrl compares SUBNQN");
            assertEquals(0, info.namespaceCount());
            assertEquals(0, IdentifyControllerDescriptor.oaes(d));
        }
    }

    @Test
    void shouldListOnlyTheSubsystemsTheHostMayConnectTo() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            assertEquals(List.of(DiscoveryLogDescriptor.DISCOVERY_NQN, openNqn, f.subnqn).stream().sorted().toList(),
                    subnqns(entries(h)).stream().sorted().toList());
        }
    }

    @Test
    void shouldHideAnAllowListedVolumeFromAnotherHost() {
        try (RawHost h = discovery(OTHER)) {
            assertEquals(List.of(DiscoveryLogDescriptor.DISCOVERY_NQN, openNqn, otherNqn).stream().sorted().toList(),
                    subnqns(entries(h)).stream().sorted().toList());
        }
    }

    @Test
    void shouldEncodeAnNvmSubsystemEntryAsTheSpecSays() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            DiscoveryLogDescriptor.Entry e = entries(h).stream().filter(x -> x.subnqn().equals(f.subnqn))
                    .findFirst().orElseThrow();
            assertEquals(new DiscoveryLogDescriptor.Entry(DiscoveryLogDescriptor.TRTYPE_RDMA,
                    DiscoveryLogDescriptor.ADRFAM_IPV4, DiscoveryLogDescriptor.SUBTYPE_NVM,
                    DiscoveryLogDescriptor.TREQ_SECURE_CHANNEL_NOT_REQUIRED, LogPages.PORT_ID, 0xFFFF,
                    TargetOptions.defaults().maxAdminEntries(), 0,
                    Integer.toString(f.target.localAddress().getPort()), f.subnqn, "127.0.0.1",
                    DiscoveryLogDescriptor.RDMA_QPTYPE_CONNECTED, DiscoveryLogDescriptor.RDMA_PRTYPE_NONE,
                    DiscoveryLogDescriptor.RDMA_CMS_RDMA_CM), e);
        }
    }

    @Test
    void shouldListTheCurrentDiscoverySubsystemFirstWithDuplicateReturnedInformation() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            DiscoveryLogDescriptor.Entry e = entries(h).get(0);
            assertEquals(DiscoveryLogDescriptor.SUBTYPE_CURRENT_DISCOVERY, e.subtype());
            assertEquals(DiscoveryLogDescriptor.DISCOVERY_NQN, e.subnqn());
            assertEquals(DiscoveryLogDescriptor.EFLAGS_DUPRETINFO, e.eflags(), "nvme connect-all skips it");
        }
    }

    @Test
    void shouldReturnTheSameBytesWhenTheLogIsReadInWindows() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            entries(h);
            byte[] whole = h.data().asSlice(0, 4096).toArray(ValueLayout.JAVA_BYTE);
            byte[] pieced = new byte[4096];
            for (int off = 0; off < 4096; off += 1000) { // windows that straddle records
                int len = Math.min(1000, 4096 - off) & ~3;
                if (len == 0) {
                    break;
                }
                assertEquals(0, h.getLogPage(4, LogPageDescriptor.LID_DISCOVERY, 0, len, off, false).status());
                MemorySegment.copy(h.data(), ValueLayout.JAVA_BYTE, 0, pieced, off, len);
            }
            assertArrayEquals(whole, pieced);
        }
    }

    @Test
    void shouldChangeGenctrWhenTheListChanges() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            assertEquals(0, h.getLogPage(5, LogPageDescriptor.LID_DISCOVERY, 0, 1024, 0, false).status());
            long before = DiscoveryLogDescriptor.genctr(h.data());
            f.target.removeVolume("vol2");
            assertEquals(0, h.getLogPage(6, LogPageDescriptor.LID_DISCOVERY, 0, 1024, 0, false).status());
            assertNotEquals(before, DiscoveryLogDescriptor.genctr(h.data()));
            assertEquals(2, DiscoveryLogDescriptor.numrec(h.data()), "current discovery + vol1");
        }
    }

    @Test
    void shouldChangeGenctrWhenAnAllowListChanges() {
        try (RawHost h = discovery(OTHER)) {
            assertEquals(0, h.getLogPage(7, LogPageDescriptor.LID_DISCOVERY, 0, 1024, 0, false).status());
            long before = DiscoveryLogDescriptor.genctr(h.data());
            f.store.setAllowedHosts(f.volume.id(), Set.of(TargetFixture.HOSTNQN, OTHER));
            assertEquals(0, h.getLogPage(8, LogPageDescriptor.LID_DISCOVERY, 0, 1024, 0, false).status());
            assertNotEquals(before, DiscoveryLogDescriptor.genctr(h.data()));
            assertEquals(4, DiscoveryLogDescriptor.numrec(h.data()), "vol1 now admits OTHER");
        }
    }

    @Test
    void shouldRefuseAnIoQueueConnectToADiscoveryController() {
        try (RawHost admin = discovery(TargetFixture.HOSTNQN); RawHost io = f.host(1, 8)) {
            int cntlid = TargetFixture.cntlid(admin);
            RawHost.Cqe c = io.fabricConnect(7, 0, DiscoveryLogDescriptor.DISCOVERY_NQN, TargetFixture.HOSTNQN, cntlid);
            TargetFixture.assertInvalidParameter(c, false, ConnectDataDescriptor.QID_OFFSET);
        }
    }

    @Test
    void shouldAnswerOnlyIdentifyControllerOnADiscoveryController() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), h.identify(Opcodes.CNS_NAMESPACE, 1).status());
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD),
                    h.identify(Opcodes.CNS_CS_CONTROLLER, 0).status());
        }
    }

    @Test
    void shouldRejectAnIoControllerLogPageOnADiscoveryController() {
        try (RawHost h = discovery(TargetFixture.HOSTNQN)) {
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD),
                    h.getLogPage(9, LogPageDescriptor.LID_SMART_HEALTH, 0xFFFFFFFF, 512, 0, false).status());
        }
    }

    /** Several `nvme discover` of one host (same hostnqn and HOSTID) at once must not replace each other. */
    @Test
    void shouldKeepConcurrentDiscoveryControllersOfTheSameHost() {
        try (RawHost a = discovery(TargetFixture.HOSTNQN); RawHost b = discovery(TargetFixture.HOSTNQN)) {
            assertEquals(2, f.target.controllerCount());
            assertEquals(0, a.exec(a.keepAlive(0, 10)).status());
        }
    }
}
