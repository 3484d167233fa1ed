package io.rdmablock.node.target;

/**
 * What a command handler asks of the transport after looking at a request (after SPDK {@code lib/nvmf/ctrlr.c}, whose
 * handlers return {@code SPDK_NVMF_REQUEST_EXEC_STATUS_COMPLETE} or {@code _ASYNCHRONOUS}). Handlers set the status,
 * the data direction and the fields of the {@link Request}, and return one of these; {@link FabricQueue#advance} alone
 * turns it into the request's next {@link Request.State}.
 */
enum Outcome {
    /** The status (and controller-to-host data, if any) is final: post the response. */
    COMPLETE,
    /** Parsed and valid, data (if any) in place: execute the command. */
    EXECUTE,
    /** Parsed and valid; host data is to be fetched with an RDMA READ first (keyed SGL), then executed. */
    TRANSFER_FROM_HOST,
    /** The command was handed to the queue's {@link io.rdmablock.node.target.VolumeIo}; its completion event will follow. */
    ASYNC,
    /** Held by the controller without an answer (Asynchronous Event Request); an event or teardown ends it. */
    HOLD,
    /** Admin Connect waiting for the host's previous association to drain ({@link AssociationFence}). */
    AWAIT_FENCE,
    /** Authentication Receive waiting for its DH computation off the poller ({@link DhchapWork}). */
    AWAIT_AUTH
}
