package io.rdmablock.rdma.verbs.ffm;

/** Close helper that keeps the first failure and attaches the rest as suppressed. */
final class Closer {
    private Closer() {
    }

    static RuntimeException close(AutoCloseable c, RuntimeException first) {
        if (c == null) {
            return first;
        }
        try {
            c.close();
            return first;
        } catch (Exception e) {
            RuntimeException r = e instanceof RuntimeException re ? re : new RuntimeException(e);
            if (first == null) {
                return r;
            }
            first.addSuppressed(r);
            return first;
        }
    }
}
