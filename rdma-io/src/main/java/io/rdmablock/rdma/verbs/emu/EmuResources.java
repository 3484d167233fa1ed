package io.rdmablock.rdma.verbs.emu;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open resources of one emulated provider ({@code soft} or {@code memory}): what the provider's {@code close}
 * closes, kind by kind, and the provider's closed flag. Shared implementation of the emulated providers, not an API
 * for users. Thread-safe.
 */
public final class EmuResources {
    private final String providerName;
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** {@code providerName} names the provider in the message of {@link #checkOpen}. */
    public EmuResources(String providerName) {
        this.providerName = providerName;
    }

    /** The provider's name ({@code soft}, {@code memory}). */
    public String providerName() {
        return providerName;
    }

    public <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        return resource;
    }

    public void untrack(AutoCloseable resource) {
        open.remove(resource);
    }

    /** Throws {@link IllegalStateException} once {@link #close} has run. */
    public void checkOpen() {
        if (closed) {
            throw new IllegalStateException(providerName + " verbs provider is closed");
        }
    }

    /** Marks the provider closed and closes what is open, of each kind in turn in the order given; once. */
    public void close(Class<?>... kinds) {
        if (closed) {
            return;
        }
        closed = true;
        for (Class<?> kind : kinds) {
            closeAll(kind);
        }
    }

    private void closeAll(Class<?> kind) {
        for (AutoCloseable c : List.copyOf(open)) {
            if (kind.isInstance(c)) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // closing everything; keep going
                }
                open.remove(c);
            }
        }
    }
}
