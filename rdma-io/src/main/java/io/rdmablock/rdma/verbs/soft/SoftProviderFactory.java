package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.emu.EmuProviderFactory;

/** Registers the {@code soft} provider with {@link io.rdmablock.rdma.verbs.Providers}. */
public final class SoftProviderFactory extends EmuProviderFactory {
    public SoftProviderFactory() {
        super("soft", SoftVerbsProvider::new);
    }
}
