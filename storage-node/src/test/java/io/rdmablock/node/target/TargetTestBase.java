package io.rdmablock.node.target;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * Base of the target tests that run against the default {@link TargetFixture} (volume "vol1", 64 MiB, 512-byte
 * LBAs) in a fresh directory, with at most one host association of their own in {@link #admin} and {@link #io}.
 * The target starts before the test's own {@code @BeforeEach}; after the test's own {@code @AfterEach} the
 * association is closed, then the target (a test may replace {@link #f}, e.g. to restart the node).
 */
abstract class TargetTestBase {
    /** The LBA size of the default fixture's volume. */
    static final int LBA = 512;
    static final long MS = 1_000_000L;

    @TempDir
    Path dir;
    TargetFixture f;
    /** The admin queue of the test's association, or null. */
    RawHost admin;
    /** The I/O queue of the test's association, or null. */
    RawHost io;

    @BeforeEach
    final void startTarget() {
        f = new TargetFixture(dir);
    }

    @AfterEach
    final void closeTarget() {
        disconnect();
        if (f != null) {
            f.close();
        }
    }

    /**
     * Connects {@link #admin} (32 entries, KATO {@code katoMs}) and {@link #io} (qid 1, 8 entries) as
     * {@code hostnqn}, asserting both Connects succeeded.
     */
    void connect(String hostnqn, int katoMs) {
        admin = f.connect(0, 32, f.subnqn, hostnqn, 0xFFFF, katoMs);
        io = f.connect(1, 8, f.subnqn, hostnqn, TargetFixture.cntlid(admin), 0);
    }

    /** Closes {@link #io} and {@link #admin}, if open. */
    void disconnect() {
        TargetFixture.close(io, admin);
        io = null;
        admin = null;
    }
}
