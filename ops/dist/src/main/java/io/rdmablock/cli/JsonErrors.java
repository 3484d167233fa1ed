package io.rdmablock.cli;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
import picocli.CommandLine;

import java.util.LinkedHashMap;
import java.util.List;

/**
 * Errors as JSON for commands run with {@code -o json} / {@code --output json}: one object on standard error instead
 * of the {@code rdmablock: ...} line, so a script that asked for JSON parses failures the same way:
 *
 * <pre>
 * {"error": "Volume not found (404): no volume named x", "exitCode": 1,
 *  "problem": {"type": "https://rdmablock.io/problems/volume-not-found", "title": ..., "status": 404, ...}}
 * </pre>
 *
 * {@code problem} is present when the management server answered one (RFC 9457), as it answered it.
 */
final class JsonErrors {
    private JsonErrors() {
    }

    /** True when {@code cmd} has an {@code --output} option and {@code args} ask it for {@code json}. */
    static boolean wanted(CommandLine cmd, List<String> args) {
        if (cmd == null || cmd.getCommandSpec().findOption("--output") == null) {
            return false;
        }
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if ("-ojson".equals(a) || "--output=json".equals(a) || "-o=json".equals(a)) {
                return true;
            }
            if (("-o".equals(a) || "--output".equals(a)) && i + 1 < args.size() && "json".equals(args.get(i + 1))) {
                return true;
            }
        }
        return false;
    }

    /** @return the JSON object for an error with this message, exit code and (nullable) server problem */
    static String of(String message, int exitCode, Problem problem) {
        var m = new LinkedHashMap<String, Object>();
        m.put("error", message);
        m.put("exitCode", exitCode);
        if (problem != null) {
            m.put("problem", problem);
        }
        return Json.pretty(m);
    }
}
