package io.rdmablock.tools.nbd;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.tools.device.DeviceSource;
import io.rdmablock.tools.device.TableOrJson;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code rdmablock nbd}: serves a volume over NBD until interrupted. Prints the NBD URI on stdout once listening.
 * When the device is lost (volume deleted, controller-loss timeout expired), commands in flight and new ones are
 * answered EIO, new handshakes are refused (NBD_REP_ERR_SHUTDOWN), and the command exits with status 1 and a
 * message on stderr within about a second.
 *
 * <pre>
 * rdmablock nbd --volume vol1 --listen 127.0.0.1:10809
 * fio --ioengine=nbd --uri=nbd://127.0.0.1:10809/vol1 --rw=randread --bs=4k --iodepth=32 --name=j --runtime=10
 * </pre>
 */
@Command(name = "nbd", mixinStandardHelpOptions = true,
        description = {"Serve a volume over the NBD protocol (fio's nbd engine, nbdcopy, qemu-img, nbd-client).",
                "Exits with status 1 when the volume is lost (deleted, or unreachable past the controller-loss "
                        + "timeout); requests then fail with EIO. A new connection sees the current size "
                        + "(after volume resize)."})
public final class NbdCommand implements Callable<Integer> {
    /** How often the device is checked for loss. */
    static final long LOSS_POLL_MS = 500;

    @Mixin
    DeviceSource deviceOptions = new DeviceSource();

    @Option(names = "--listen", paramLabel = "ADDR", defaultValue = "127.0.0.1:10809",
            description = "host:port, port (binds 127.0.0.1) or unix:/path (default: ${DEFAULT-VALUE}). NBD has no "
                    + "authentication: a non-loopback address lets anyone who reaches it use the volume (warned).")
    String listen;

    @Option(names = "--max-connections", paramLabel = "N", defaultValue = "" + NbdServer.DEFAULT_MAX_CONNECTIONS,
            description = "Connections open at once, 1.." + NbdServer.MAX_CONNECTIONS_LIMIT
                    + "; more are closed at once and logged (default: ${DEFAULT-VALUE}).")
    int maxConnections;

    @Option(names = "--export-name", paramLabel = "NAME",
            description = "Export name (default: the volume name or file name); the empty name also selects it.")
    String exportName;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
            description = "Startup line: table (the nbd:// URI) or json ({\"uri\", \"export\", \"readOnly\"})"
                    + " (default: ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--read-only", description = "Export read-only (writes fail with EPERM).")
    boolean readOnly;

    @Option(names = "--iodepth", paramLabel = "N", defaultValue = "" + NbdServer.DEFAULT_DEPTH,
            description = "Requests in flight per connection (default: ${DEFAULT-VALUE}).")
    int depth;

    /** {@code --depth}: the old spelling of {@code --iodepth}, kept for scripts. */
    @Option(names = "--depth", paramLabel = "N", hidden = true)
    Integer depthAlias;

    @Option(names = "--max-payload", paramLabel = "BYTES", defaultValue = "" + NbdExport.DEFAULT_MAX_PAYLOAD_BYTES,
            description = "Maximum READ/WRITE length advertised (default: ${DEFAULT-VALUE}).")
    int maxPayloadBytes;

    @Override
    public Integer call() throws Exception {
        if (!TableOrJson.valid(output)) {
            throw new IllegalArgumentException(TableOrJson.invalid(output));
        }
        if (depthAlias != null) {
            depth = depthAlias;
        }
        BlockDevice device = deviceOptions.open(deviceOptions.ioQueues());
        String name = exportName != null ? exportName : deviceOptions.displayName();
        NbdExport export = new NbdExport(name, "rdmablock volume " + name, device, readOnly, maxPayloadBytes);
        NbdServer server = new NbdServer(export, listen, depth, NbdServer.DEFAULT_SLOT_BYTES, maxConnections);
        if (NbdServer.exposed(server.localAddress())) {
            System.err.println("nbd: WARNING: listening on " + server.localAddress() + ", not a loopback address. NBD "
                    + "has no authentication: anyone who can reach this address can read"
                    + (readOnly ? "" : " and write") + " the volume. Prefer 127.0.0.1 or unix:/path.");
        }
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            device.close();
            done.countDown();
        }, "nbd-shutdown"));
        System.out.println(TableOrJson.json(output) ? io.rdmablock.mgmt.client.Json.write(java.util.Map.of("uri",
                String.valueOf(server.uri()), "export", name, "readOnly", readOnly)) : server.uri());
        System.out.flush();
        while (!done.await(LOSS_POLL_MS, TimeUnit.MILLISECONDS)) {
            String lost = device.lossReason();
            if (lost != null) {
                // in-flight and new commands already fail with EIO; give their replies a moment, then stop
                Thread.sleep(LOSS_POLL_MS);
                System.err.println("nbd: device lost, cannot serve anymore: " + lost);
                server.close();
                device.close();
                return 1;
            }
        }
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new NbdCommand()).execute(args));
    }
}
