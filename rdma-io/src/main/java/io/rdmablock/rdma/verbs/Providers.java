package io.rdmablock.rdma.verbs;

import java.util.ServiceLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses a verbs provider by configuration: {@code rdma.provider = auto | soft | ffm | memory}
 * (system property {@code rdma.provider}, environment {@code RDMABLOCK_RDMA_PROVIDER}, default {@code auto}).
 *
 * <p>{@code auto} takes {@code ffm} when it reports at least one device, otherwise {@code soft}, and logs one line
 * saying which and why. {@code ffm} asked for explicitly with no device fails with a message that says how to
 * create one. {@code memory} (benchmarks and tests only) connects ids within one JVM: SEND, RDMA READ and WRITE
 * are memory copies on the posting threads ({@code io.rdmablock.rdma.verbs.memory}); {@code auto} never picks it.
 * Providers are found with {@link ServiceLoader} ({@link VerbsProviderFactory}).
 */
public final class Providers {
    private static final Logger LOG = LoggerFactory.getLogger(Providers.class);

    private Providers() {
    }

    /**
     * The configured mode ({@link ProviderConfiguration#PROVIDER}): system property, then environment, then
     * {@code "auto"}; read at each call (a command's {@code --provider} sets the property after start).
     *
     * @throws IllegalArgumentException naming the property when the value is none of auto, soft, ffm, memory
     */
    public static String configuredMode() {
        return ProviderConfiguration.fromSystem().provider();
    }

    /** {@link #select(String)} with {@link #configuredMode()}. */
    public static VerbsProvider select() {
        return select(configuredMode());
    }

    /**
     * @param mode {@code auto}, {@code soft}, {@code ffm} or {@code memory}
     * @throws IllegalArgumentException for any other mode (message lists the valid ones)
     * @throws VerbsException when {@code ffm} is asked for and no device exists, or its libraries cannot be loaded
     */
    public static VerbsProvider select(String mode) {
        switch (mode) {
            case "soft":
                return factory("soft").create();
            case "memory":
                return factory("memory").create();
            case "ffm": {
                VerbsProvider p = factory("ffm").create();
                if (p.deviceNames().isEmpty()) {
                    p.close();
                    throw new VerbsException("rdma.provider=ffm but no RDMA device was found (ibv_get_device_list "
                            + "returned none). Create a software device with e.g. `rdma link add rxe0 type rxe netdev eth0` "
                            + "(Soft-RoCE) or `rdma link add siw0 type siw netdev eth0` (SoftiWARP), or use rdma.provider=soft");
                }
                return p;
            }
            case "auto": {
                VerbsProviderFactory ffm = findFactory("ffm");
                if (ffm != null) {
                    try {
                        VerbsProvider p = ffm.create();
                        if (!p.deviceNames().isEmpty()) {
                            LOG.info("rdma.provider=auto: using ffm, devices {}", p.deviceNames());
                            return p;
                        }
                        p.close();
                        LOG.info("rdma.provider=auto: using soft (libibverbs reports no RDMA device)");
                    } catch (RuntimeException | LinkageError e) {
                        LOG.info("rdma.provider=auto: using soft (ffm unavailable: {})", e.toString());
                    }
                } else {
                    LOG.info("rdma.provider=auto: using soft (no ffm provider on the classpath)");
                }
                return factory("soft").create();
            }
            default:
                throw new IllegalArgumentException("invalid rdma.provider: '" + mode + "' (valid: auto, soft, ffm, memory)");
        }
    }

    private static VerbsProviderFactory factory(String name) {
        VerbsProviderFactory f = findFactory(name);
        if (f == null) {
            throw new VerbsException("verbs provider '" + name + "' is not on the classpath");
        }
        return f;
    }

    private static VerbsProviderFactory findFactory(String name) {
        for (VerbsProviderFactory f : ServiceLoader.load(VerbsProviderFactory.class)) {
            if (f.name().equals(name)) {
                return f;
            }
        }
        return null;
    }
}
