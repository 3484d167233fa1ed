package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The one Jackson configuration of the management model: unknown properties are ignored (a newer server may add
 * fields), missing primitives stay 0 (the server validates presence against the OpenAPI spec), no pretty printing
 * except through {@link #pretty(Object)}. The mapper is thread-safe once built.
 */
public final class Json {
    /** Shared mapper. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .build();

    private Json() {
    }

    /** @return compact JSON of a model value */
    public static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("JSON encoding failed for " + value.getClass().getName(), e);
        }
    }

    /** @return indented JSON of a model value, for humans (CLI {@code --output json}) */
    public static String pretty(Object value) {
        try {
            return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("JSON encoding failed for " + value.getClass().getName(), e);
        }
    }

    /**
     * @return the decoded value
     * @throws IllegalArgumentException when the text is not JSON of that shape (message names the type)
     */
    public static <T> T read(String text, Class<T> type) {
        try {
            return MAPPER.readValue(text, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("invalid JSON for " + type.getSimpleName() + ": "
                    + e.getOriginalMessage(), e);
        }
    }
}
