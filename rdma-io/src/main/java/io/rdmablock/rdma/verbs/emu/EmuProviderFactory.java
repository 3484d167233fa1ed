package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.VerbsProviderFactory;
import java.util.function.Supplier;

/**
 * Registers an emulated provider with {@link io.rdmablock.rdma.verbs.Providers} (META-INF/services names each
 * provider's subclass). Shared implementation of the emulated providers, not an API for users.
 */
public abstract class EmuProviderFactory implements VerbsProviderFactory {
    private final String name;
    private final Supplier<? extends VerbsProvider> make;

    protected EmuProviderFactory(String name, Supplier<? extends VerbsProvider> make) {
        this.name = name;
        this.make = make;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final VerbsProvider create() {
        return make.get();
    }
}
