package io.rdmablock.rdma.verbs;

/**
 * Service-provider interface ({@code META-INF/services/io.rdmablock.rdma.verbs.VerbsProviderFactory}) through
 * which {@link Providers} finds the providers on the classpath.
 */
public interface VerbsProviderFactory {
    /** {@code "soft"}, {@code "ffm"} or {@code "memory"}. */
    String name();

    /** Creates a provider instance; may throw {@link VerbsException} or {@link LinkageError} if unusable here. */
    VerbsProvider create();
}
