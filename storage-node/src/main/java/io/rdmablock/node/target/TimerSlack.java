package io.rdmablock.node.target;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The calling thread's timer slack ({@code prctl(PR_SET_TIMERSLACK, ns)}, prctl(2)): how much later than asked the
 * kernel may end its timed waits, 50 us by default for a normal thread. A poller's waits are bounded by tens of
 * microseconds (a park of the idle wait, a wait on a peer queue for its share of it), so with the default slack a
 * 12.5 us wait can last 60 us; pollers set 1 us. Linux only; elsewhere, or when the call fails, nothing changes.
 */
final class TimerSlack {
    private static final Logger LOG = LoggerFactory.getLogger(TimerSlack.class);
    /** {@code PR_SET_TIMERSLACK} from {@code <linux/prctl.h>}. */
    private static final int PR_SET_TIMERSLACK = 29;
    /** {@code PR_GET_TIMERSLACK}: the slack is the call's result (an int: slacks above 2^31 ns read wrong). */
    private static final int PR_GET_TIMERSLACK = 30;
    private static final MethodHandle PRCTL = lookup();

    private TimerSlack() {
    }

    private static MethodHandle lookup() {
        try {
            Linker linker = Linker.nativeLinker();
            MemorySegment sym = linker.defaultLookup().find("prctl").orElse(null);
            return sym == null ? null : linker.downcallHandle(sym, FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG),
                    Linker.Option.firstVariadicArg(1));
        } catch (RuntimeException | LinkageError e) {
            return null;
        }
    }

    /**
     * Sets the calling thread's timer slack.
     *
     * @param ns slack in nanoseconds, &gt;= 1 (0 would restore the process default)
     * @return true when the kernel took it
     */
    static boolean set(long ns) {
        if (ns < 1) {
            throw new IllegalArgumentException("invalid ns: ns=" + ns + ", min=1");
        }
        if (PRCTL == null) {
            return false;
        }
        try {
            int r = (int) PRCTL.invokeExact(PR_SET_TIMERSLACK, ns);
            if (r != 0) {
                LOG.debug("prctl(PR_SET_TIMERSLACK, {}) failed: {}", ns, r);
            }
            return r == 0;
        } catch (Throwable t) {
            LOG.debug("prctl(PR_SET_TIMERSLACK) unavailable: {}", t.toString());
            return false;
        }
    }

    /** The calling thread's timer slack in ns ({@code prctl(PR_GET_TIMERSLACK)}), or -1 when it cannot be read. */
    static long current() {
        if (PRCTL == null) {
            return -1;
        }
        try {
            return (int) PRCTL.invokeExact(PR_GET_TIMERSLACK, 0L);
        } catch (Throwable t) {
            return -1;
        }
    }
}
