package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.emu.EmuProviderFactory;

/** Registers the {@code memory} provider with {@link io.rdmablock.rdma.verbs.Providers}. */
public final class MemProviderFactory extends EmuProviderFactory {
    public MemProviderFactory() {
        super("memory", MemVerbsProvider::new);
    }
}
