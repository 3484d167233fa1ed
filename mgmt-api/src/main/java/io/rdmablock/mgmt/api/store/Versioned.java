package io.rdmablock.mgmt.api.store;

import java.util.Objects;

/**
 * A stored value with the store's revision of it, for compare-and-set
 * ({@link MetadataStore#replaceVolume(String, long, VolumeRecord)}).
 *
 * <p>Revisions are the store's, not the record's: they grow with every write of any key and are never reused,
 * also after a key is removed and written again (so a compare-and-set against a revision read before a delete
 * and re-create fails). This is etcd's {@code mod_revision}; a key that does not exist has revision 0.
 *
 * @param value    the record
 * @param revision store revision of the last write of this key, &gt;= 1
 */
public record Versioned<T>(T value, long revision) {
    public Versioned {
        Objects.requireNonNull(value, "value");
        if (revision < 1) {
            throw new IllegalArgumentException("invalid revision: revision=" + revision + ", min=1");
        }
    }
}
