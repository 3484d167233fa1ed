package io.rdmablock.node.store;

/**
 * A change to the volume table, delivered to listeners registered with {@link VolumeStore#addListener} after the
 * change is durable (e.g. so the target can raise a Namespace Attribute Changed event after a resize).
 *
 * @param kind what happened
 * @param info the volume's row after the change (for {@link Kind#DELETED}, the last row, state DELETING)
 */
public record VolumeEvent(Kind kind, VolumeInfo info) {

    /** Kinds of change. */
    public enum Kind {
        CREATED,
        RESIZED,
        ALLOWED_HOSTS_CHANGED,
        DELETED
    }
}
