package io.rdmablock.node.target;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.WrOpcode;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A provider around another one whose devices answer {@link DeviceContext#transmitsUnsignaledPayloadLate} as told
 * (siw answers true) and that records every RDMA WRITE posted on its queue pairs (opcode, send flags, bytes), so a
 * test can check which of them a poster signaled. Everything else is the wrapped provider's.
 */
final class LatePayloadProvider implements VerbsProvider {
    /** One posted RDMA WRITE: its send flags and its payload's bytes (sum of its SGEs). */
    record PostedWrite(int sendFlags, long bytes) {
        boolean signaled() {
            return (sendFlags & SendWr.SIGNALED) != 0;
        }
    }

    private final VerbsProvider inner;
    private final boolean late;
    private final Map<DeviceContext, Device> devices = new ConcurrentHashMap<>();
    final ConcurrentLinkedQueue<PostedWrite> writes = new ConcurrentLinkedQueue<>();

    LatePayloadProvider(VerbsProvider inner, boolean late) {
        this.inner = inner;
        this.late = late;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public List<String> deviceNames() {
        return inner.deviceNames();
    }

    @Override
    public CmId createId() {
        return new Id(inner.createId());
    }

    @Override
    public CmListener listen(InetSocketAddress bindAddress, int backlog) {
        CmListener l = inner.listen(bindAddress, backlog);
        return new CmListener() {
            @Override
            public InetSocketAddress localAddress() {
                return l.localAddress();
            }

            @Override
            public CmId getRequest(long timeoutNs) {
                CmId id = l.getRequest(timeoutNs);
                return id == null ? null : new Id(id);
            }

            @Override
            public void close() {
                l.close();
            }
        };
    }

    @Override
    public void close() {
        inner.close();
    }

    private final class Device implements DeviceContext {
        private final DeviceContext d;

        Device(DeviceContext d) {
            this.d = d;
        }

        @Override
        public String name() {
            return d.name();
        }

        @Override
        public Transport transport() {
            return d.transport();
        }

        @Override
        public boolean supportsSendWithInvalidate() {
            return d.supportsSendWithInvalidate();
        }

        @Override
        public boolean transmitsUnsignaledPayloadLate() {
            return late;
        }

        @Override
        public ProtectionDomain allocPd() {
            return d.allocPd();
        }

        @Override
        public CompletionQueue createCq(int capacity) {
            return d.createCq(capacity);
        }
    }

    private final class Qp implements QueuePair {
        private final QueuePair q;

        Qp(QueuePair q) {
            this.q = q;
        }

        @Override
        public int qpNum() {
            return q.qpNum();
        }

        @Override
        public QpState state() {
            return q.state();
        }

        @Override
        public QpInitAttr attr() {
            return q.attr();
        }

        @Override
        public void postSend(SendWr wr) {
            for (SendWr w = wr; w != null; w = w.next) {
                if (w.opcode == WrOpcode.RDMA_WRITE) {
                    writes.add(new PostedWrite(w.sendFlags, w.totalLength()));
                }
            }
            q.postSend(wr);
        }

        @Override
        public void postRecv(RecvWr wr) {
            q.postRecv(wr);
        }

        @Override
        public void moveToError() {
            q.moveToError();
        }

        @Override
        public void close() {
            q.close();
        }
    }

    private final class Id implements CmId {
        private final CmId id;
        private volatile Qp qp;

        Id(CmId id) {
            this.id = id;
        }

        @Override
        public void resolve(InetSocketAddress remote, long timeoutNs) {
            id.resolve(remote, timeoutNs);
        }

        @Override
        public DeviceContext device() {
            DeviceContext d = id.device();
            return d == null ? null : devices.computeIfAbsent(d, Device::new);
        }

        @Override
        public QueuePair createQp(QpInitAttr attr) {
            qp = new Qp(id.createQp(attr));
            return qp;
        }

        @Override
        public QueuePair qp() {
            return id.qp() == null ? null : qp;
        }

        @Override
        public void connect(byte[] privateData, long timeoutNs) {
            id.connect(privateData, timeoutNs);
        }

        @Override
        public byte[] privateData() {
            return id.privateData();
        }

        @Override
        public void accept(byte[] privateData, long timeoutNs) {
            id.accept(privateData, timeoutNs);
        }

        @Override
        public void reject(byte[] privateData) {
            id.reject(privateData);
        }

        @Override
        public CmEventType pollEvent(long timeoutNs) {
            return id.pollEvent(timeoutNs);
        }

        @Override
        public void disconnect() {
            id.disconnect();
        }

        @Override
        public InetSocketAddress localAddress() {
            return id.localAddress();
        }

        @Override
        public InetSocketAddress remoteAddress() {
            return id.remoteAddress();
        }

        @Override
        public void close() {
            id.close();
        }
    }
}
