package io.rdmablock.initiator;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;

import java.util.ArrayList;
import java.util.List;

/** {@link CopySource} over the management server: {@code GET /v1/volumes/{name}} and the unreachable report. */
final class MgmtCopySource implements CopySource {
    private final MgmtClient mgmt;
    private final String volume;

    MgmtCopySource(MgmtClient mgmt, String volume) {
        this.mgmt = mgmt;
        this.volume = volume;
    }

    /** The copies of a volume record that have a fabric address, the primary first. */
    static Copies copiesOf(Volume v) {
        List<Copy> out = new ArrayList<>();
        for (VolumeCopy c : v.copies()) {
            if (c.fabricAddress() != null && !c.fabricAddress().isBlank()) {
                Copy copy = new Copy(c.nodeId(), c.role() == CopyRole.PRIMARY, c.fabricAddress());
                if (copy.primary()) {
                    out.addFirst(copy);
                } else {
                    out.add(copy);
                }
            }
        }
        if (out.isEmpty() && v.fabricAddress() != null && !v.fabricAddress().isBlank()) {
            out.add(new Copy(v.nodeId(), true, v.fabricAddress())); // an older server: no copies list
        }
        return new Copies(v.epoch(), out);
    }

    @Override
    public Copies read() {
        return copiesOf(mgmt.getVolume(volume));
    }

    @Override
    public void reportUnreachable(String nodeId, long epoch, String reporter) {
        mgmt.reportUnreachable(volume, nodeId, epoch, reporter);
    }
}
