package io.rdmablock.rdma.verbs.ffm;

import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Locale;

/**
 * FFM hot-path cost (prints figures; not a test): one signaled SEND posted and its completion polled through the
 * {@code ibv_context.ops} table of the stub device ({@code src/test/c/verbs_stub.c}), in Java through the ffm
 * provider versus the same loop in C ({@code src/test/c/bench_c.c}) against the same stub library.
 * Both take the best of {@code rounds} rounds of {@code iterations} operations after a warm-up, measured in thread
 * CPU time (the machines this runs on are shared; wall time would mostly measure the other load).
 *
 * <p>Run with {@code ops/bench/verbs-ffm [iterations] [rounds]}; the working directory must be {@code rdma-io}.
 */
public final class FfmHotPathBenchmark {
    /** Thread CPU time on both sides (CLOCK_THREAD_CPUTIME_ID in C): time lost to other load is excluded. */
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private FfmHotPathBenchmark() {
    }

    public static void main(String[] args) throws Throwable {
        long iterations = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;

        QpInitAttr attr = new QpInitAttr();
        StubDevice stub = StubDevice.open(attr);
        String cExe = Gcc.OUT.resolve("bench_c").toString();
        Gcc.compile("-O2", "-Wall", "-o", cExe, Gcc.SRC.resolve("bench_c.c").toString(),
                "-L" + Gcc.OUT.toAbsolutePath(), "-lverbsstub", "-Wl,-rpath," + Gcc.OUT.toAbsolutePath());

        SendWr wr = new SendWr(1);
        WorkCompletion[] wc = WorkCompletion.array(16);
        long buf = 0x10000;
        // warm-up: let C2 compile the post/poll path
        javaLoop(stub, wr, wc, buf, Math.min(iterations, 2_000_000L));
        // Java and C rounds alternate, so both see the same machine load; the best round of each is reported.
        double bestJava = Double.MAX_VALUE;
        double bestC = Double.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            long t0 = CPU.getCurrentThreadCpuTime();
            long sink = javaLoop(stub, wr, wc, buf, iterations);
            double ns = (CPU.getCurrentThreadCpuTime() - t0) / (double) iterations;
            double c = cRound(cExe, iterations);
            System.out.printf(Locale.ROOT, "round %d: java %.1f ns/op, c %.1f ns/op (sink %d)%n", r, ns, c, sink & 1);
            bestJava = Math.min(bestJava, ns);
            bestC = Math.min(bestC, c);
        }
        System.out.printf(Locale.ROOT, "verbs-ffm: java %.1f ns/op, c %.1f ns/op (thread CPU time), ratio %.2f (target <= 1.5), "
                + "post+poll of 1 signaled SEND via ibv_context.ops, best of %d x %d%n",
                bestJava, bestC, bestJava / bestC, rounds, iterations);
    }

    private static double cRound(String cExe, long iterations) throws Exception {
        String out = Gcc.run(List.of(cExe, Long.toString(iterations), "1"), 600);
        if (out == null) {
            throw new IllegalStateException("bench_c failed: " + Gcc.lastOutput());
        }
        for (String line : out.split("\n")) {
            if (line.startsWith("c_ns_per_op ")) {
                return Double.parseDouble(line.substring("c_ns_per_op ".length()).trim());
            }
        }
        throw new IllegalStateException("bench_c printed no c_ns_per_op: " + out);
    }

    private static long javaLoop(StubDevice stub, SendWr wr, WorkCompletion[] wc, long buf, long n) {
        long sink = 0;
        for (long i = 0; i < n; i++) {
            wr.wrId = i;
            wr.opcode = WrOpcode.SEND;
            wr.sendFlags = SendWr.SIGNALED;
            wr.numSge = 1;
            wr.sgList[0].set(buf, 64, 0x1234);
            stub.qp.postSend(wr);
            int got = stub.cq.poll(wc, 16);
            for (int k = 0; k < got; k++) {
                WorkCompletion c = wc[k];
                sink += c.wrId + c.status.ordinal() + c.opcode.ordinal() + c.byteLen + c.qpNum + c.vendorErr;
            }
        }
        return sink;
    }
}
