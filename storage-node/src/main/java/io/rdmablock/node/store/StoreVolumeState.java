package io.rdmablock.node.store;

/** Lifecycle state of a volume as recorded in the volume table. */
public enum StoreVolumeState {
    /** Record written, data file not yet complete; rolled back when the store reopens. */
    CREATING,
    /** Usable for I/O. */
    ONLINE,
    /** Being deleted; the deletion is completed when the store reopens. */
    DELETING
}
