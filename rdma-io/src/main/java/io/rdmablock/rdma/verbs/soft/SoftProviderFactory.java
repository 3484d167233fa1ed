package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.VerbsProviderFactory;

/** Registers the {@code soft} provider with {@link io.rdmablock.rdma.verbs.Providers}. */
public final class SoftProviderFactory implements VerbsProviderFactory {
    @Override
    public String name() {
        return "soft";
    }

    @Override
    public VerbsProvider create() {
        return new SoftVerbsProvider();
    }
}
