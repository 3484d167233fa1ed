package io.rdmablock.node.target;

import io.rdmablock.node.io.LocalVolumeIo;
import io.rdmablock.node.target.VolumeIo;

/**
 * A {@link VolumeIo} that hands everything to the {@link LocalVolumeIo} it opens on its queue: the base of the
 * tests' volume I/Os, which override what they observe or hold.
 */
abstract class ForwardingVolumeIo implements VolumeIo {
    final LocalVolumeIo local;

    ForwardingVolumeIo(VolumeIo.Context c) {
        this.local = LocalVolumeIo.open(c);
    }

    @Override
    public int start(Request r, long nowNs) {
        return local.start(r, nowNs);
    }

    @Override
    public int poll(Completions sink, int max, long nowNs) {
        return local.poll(sink, max, nowNs);
    }

    @Override
    public int inFlight() {
        return local.inFlight();
    }

    @Override
    public void close() {
        local.close();
    }
}
