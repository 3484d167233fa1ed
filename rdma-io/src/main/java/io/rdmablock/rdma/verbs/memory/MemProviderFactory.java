package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.VerbsProviderFactory;

/** Registers the {@code memory} provider with {@link io.rdmablock.rdma.verbs.Providers}. */
public final class MemProviderFactory implements VerbsProviderFactory {
    @Override
    public String name() {
        return "memory";
    }

    @Override
    public VerbsProvider create() {
        return new MemVerbsProvider();
    }
}
