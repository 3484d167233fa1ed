package io.rdmablock.rdma.verbs;

/** Connection-manager events ({@code enum rdma_cm_event_type}) that this API surfaces. */
public enum CmEventType {
    ADDR_RESOLVED, ADDR_ERROR, ROUTE_RESOLVED, ROUTE_ERROR, CONNECT_REQUEST, CONNECT_RESPONSE, CONNECT_ERROR,
    UNREACHABLE, REJECTED, ESTABLISHED, DISCONNECTED, DEVICE_REMOVAL, TIMEWAIT_EXIT
}
