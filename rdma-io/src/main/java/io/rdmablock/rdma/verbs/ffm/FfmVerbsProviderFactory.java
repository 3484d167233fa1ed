package io.rdmablock.rdma.verbs.ffm;

import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.VerbsProviderFactory;

/** Service entry for the {@code ffm} provider. */
public final class FfmVerbsProviderFactory implements VerbsProviderFactory {
    @Override
    public String name() {
        return "ffm";
    }

    /**
     * @throws io.rdmablock.rdma.verbs.VerbsException if libibverbs.so.1 or librdmacm.so.1 cannot be loaded
     */
    @Override
    public VerbsProvider create() {
        return new FfmVerbsProvider();
    }
}
