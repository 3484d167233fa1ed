package io.rdmablock.node.failover;

import io.rdmablock.node.target.Subsystem;
import java.util.Set;

/**
 * How a {@link Subsystem} exports its volume at one moment (its replication role): mode, the primary node's host NQN
 * (SECONDARY only), the peer nodes admitted as nodes (SECONDARY only: the host NQNs of the nodes holding the volume's
 * other copies, as the management plane named them, the primary included) and a generation that grows with every
 * change. An I/O queue whose {@link io.rdmablock.node.target.VolumeIo} was opened under an older role re-opens it once drained. Immutable.
 */
public record ExportRole(Subsystem.Mode mode, String primaryHostNqn, Set<String> peers, long generation) {
    public ExportRole {
        peers = Set.copyOf(peers);
    }

    /**
     * True when this is a secondary and {@code hostnqn} is one of its named peer nodes: its I/O is epoch-fenced,
     * not ANA-gated. Not only the primary this node knows of: a newly promoted primary (one of the other copies)
     * activates its epoch here before this node's next heartbeat tells it of the promotion (docs/failover.md);
     * the epoch in CDW2-3, bounded by the {@link Subsystem#epochCeiling}, decides whose writes are taken. Never by NQN
     * prefix: a peer must also prove its node link secret at Connect ({@link io.rdmablock.node.target.Connect}).
     */
    public boolean exempts(String hostnqn) {
        return mode == Subsystem.Mode.SECONDARY && hostnqn != null && peers.contains(hostnqn);
    }
}
