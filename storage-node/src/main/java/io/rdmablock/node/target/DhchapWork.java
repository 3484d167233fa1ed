package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.auth.DhGroup;
import io.rdmablock.rdma.fabric.auth.DhchapController;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the node's DH-HMAC-CHAP computations run ({@link DhchapController#compute}: the Challenge's DH key pair, the
 * Reply's shared secret and R1 check; NVMe Base 2.0 section 8.13.5.1): a small bounded pool of worker threads
 * ({@link DhchapLimits#threads}, queue {@link DhchapLimits#queueMax}), never a poller, and a budget of DH work per peer IP
 * address ({@link DhchapLimits#addressUnitsPerSecond}, burst {@link DhchapLimits#addressBurstUnits}) so that a peer claiming a
 * listed host NQN cannot make the node do more than that on keys it will never use. The budget counts work, not
 * time: one computation is one modular exponentiation, charged {@link DhGroup#cost} units (ffdhe2048 1, ffdhe8192
 * 28), so a legitimate host gets the same number of connections on a slow machine (an emulator, where a cold
 * ffdhe2048 exponentiation takes seconds) as on a fast one. A computation starts only when its address has its
 * cost left (or a full budget, when the cost is above the burst) and is charged at once. When the budget is spent or the pool's queue is
 * full, {@link #submit} answers null and the queue's Authentication Receive stays parked
 * ({@link Request.State#AWAITING_AUTH}) and asks again ({@link QueueAuthentication#resume}). Thread-safe.
 */
final class DhchapWork implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DhchapWork.class);
    /** Address entries kept before full (idle) ones are dropped. */
    private static final int MAX_ADDRESSES = 4096;

    /** One submitted computation; {@link #done} is set (after its effects) by the worker. */
    static final class Job {
        private volatile boolean done;
        private volatile String error;

        boolean done() {
            return done;
        }

        /** What failed in the computation (for the log), or null. */
        String error() {
            return error;
        }
    }

    /** DH work budget of one peer address, in millionths of a {@link DhGroup#cost} unit; guarded by itself. */
    private static final class Budget {
        private long micro;
        private long lastNs;

        Budget(long burstMicro, long nowNs) {
            micro = burstMicro;
            lastNs = nowNs;
        }
    }

    final DhchapLimits limits;
    private final ThreadPoolExecutor executor;
    private final ConcurrentHashMap<InetAddress, Budget> budgets = new ConcurrentHashMap<>();
    private static final InetAddress UNKNOWN = InetAddress.getLoopbackAddress();

    DhchapWork(DhchapLimits limits) {
        this.limits = limits;
        AtomicInteger n = new AtomicInteger();
        executor = new ThreadPoolExecutor(limits.threads(), limits.threads(), 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(limits.queueMax()), r -> {
                    Thread t = new Thread(r, "rdmablock-dhchap-" + n.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                });
        executor.allowCoreThreadTimeOut(true);
    }

    /**
     * Starts {@code d}'s pending computation ({@link DhchapController#compute}) on a worker, charged
     * {@link DhGroup#cost} of its group to {@code peer} (null: one shared entry for unknown peers). The caller must
     * not touch {@code d} until the job is {@link Job#done}.
     *
     * @return the job, or null when {@code peer}'s budget is spent or the pool is full (ask again later)
     */
    Job submit(InetAddress peer, DhchapController d, long nowNs) {
        InetAddress key = peer == null ? UNKNOWN : peer;
        if (budgets.size() > MAX_ADDRESSES) {
            sweep(nowNs);
        }
        long cost = d.group() == null ? 0 : d.group().cost() * 1_000_000L;
        Budget b = budgets.computeIfAbsent(key, k -> new Budget(burstMicro(), nowNs));
        synchronized (b) {
            refill(b, nowNs);
            if (cost > 0 && b.micro < Math.min(cost, burstMicro())) {
                return null;
            }
            b.micro -= cost;
        }
        Job job = new Job();
        try {
            executor.execute(() -> run(job, d));
        } catch (RejectedExecutionException e) {
            synchronized (b) {
                b.micro += cost; // not run: not charged
            }
            return null;
        }
        return job;
    }

    private static void run(Job job, DhchapController d) {
        try {
            d.compute();
        } catch (RuntimeException e) {
            LOG.warn("DH-HMAC-CHAP computation failed: {}", e.toString());
            job.error = e.toString();
        } finally {
            job.done = true;
        }
    }

    private long burstMicro() {
        return limits.addressBurstUnits() * 1_000_000L;
    }

    private void refill(Budget b, long nowNs) {
        long elapsed = nowNs - b.lastNs;
        if (elapsed > 0) {
            // units per s = millionths per 1000 ns
            b.micro = Math.min(burstMicro(), b.micro + elapsed / 1000 * limits.addressUnitsPerSecond());
            b.lastNs = nowNs;
        }
    }

    /** Drops the entries of addresses whose budget is full again (nothing to remember about them). */
    private void sweep(long nowNs) {
        long burst = burstMicro();
        budgets.entrySet().removeIf(e -> {
            Budget b = e.getValue();
            synchronized (b) {
                refill(b, nowNs);
                return b.micro >= burst;
            }
        });
    }

    /** Stops the workers; a computation still running finishes unobserved. */
    @Override
    public void close() {
        executor.shutdownNow();
    }
}
