package io.rdmablock.mgmt.api.http;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.util.Map;

/**
 * Reads the OpenAPI contract for the request validator. vertx-openapi 5.0 refuses a contract whose responses use
 * a media type outside its fixed list, and {@code application/problem+json} is not in it; responses are not
 * validated here anyway, so the copy handed to the validator says {@code application/json} where the published
 * contract (served unchanged at {@code /openapi.yaml}) says {@code application/problem+json}. The copy also has no
 * {@code security} requirements: {@link BearerAuth} enforces them before validation (the router builder would
 * otherwise demand an authentication handler per scheme).
 */
final class ContractLoader {
    private static final String PROBLEM = "application/problem+json";

    private ContractLoader() {
    }

    /** @return the contract as JSON, problem media types renamed */
    static JsonObject forValidation(String yamlText) {
        Map<String, Object> tree = new Yaml(new SafeConstructor(new LoaderOptions())).load(yamlText);
        JsonObject json = new JsonObject(tree);
        rename(json);
        dropSecurity(json);
        return json;
    }

    /** Removes the top-level and every operation's {@code security} (BearerAuth is the judge). */
    private static void dropSecurity(JsonObject contract) {
        contract.remove("security");
        JsonObject paths = contract.getJsonObject("paths");
        if (paths == null) {
            return;
        }
        for (String path : paths.fieldNames()) {
            Object item = paths.getValue(path);
            if (item instanceof JsonObject ops) {
                for (String method : ops.fieldNames()) {
                    if (ops.getValue(method) instanceof JsonObject op) {
                        op.remove("security");
                    }
                }
            }
        }
    }

    private static void rename(Object node) {
        if (node instanceof JsonObject object) {
            if (object.containsKey(PROBLEM) && !object.containsKey("application/json")) {
                object.put("application/json", object.remove(PROBLEM));
            }
            for (String key : object.fieldNames()) {
                rename(object.getValue(key));
            }
        } else if (node instanceof JsonArray array) {
            for (Object item : array) {
                rename(item);
            }
        }
    }
}
