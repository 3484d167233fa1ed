package io.rdmablock.mgmt.client;

/**
 * What a volume's limits do now on its primary (docs/qos.md): reported by the node in its heartbeat
 * ({@link VolumeReport#qosActivity}), kept in the management server's memory (not stored) and shown with the volume
 * ({@link Volume#qosActivity}, {@code rdmablock volume get}).
 *
 * @param heldCommands   commands of the volume waiting for budget at the node's last heartbeat, &gt;= 0
 * @param delayedSeconds total time, seconds, the volume's commands have waited for budget on that node since it
 *                       began serving the volume (the node's {@code rdmablock_volume_qos_delayed_seconds_total}),
 *                       &gt;= 0
 */
public record QosActivity(int heldCommands, double delayedSeconds) {
    public QosActivity {
        if (heldCommands < 0) {
            throw new IllegalArgumentException("invalid heldCommands: value=" + heldCommands + ", min=0");
        }
        if (!(delayedSeconds >= 0)) {
            throw new IllegalArgumentException("invalid delayedSeconds: value=" + delayedSeconds + ", min=0");
        }
    }
}
