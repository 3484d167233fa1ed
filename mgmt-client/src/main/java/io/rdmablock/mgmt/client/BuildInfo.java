package io.rdmablock.mgmt.client;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * What was built: the Maven project version (from the filtered resource {@code build.properties}) and the git commit,
 * which the launcher passes as system property {@code rdmablock.commit} (or environment {@code RDMABLOCK_COMMIT});
 * {@code "unknown"} when neither is set. Exposed by nodes and the management server as {@code rdmablock_build_info}.
 *
 * @param version project version, e.g. {@code 0.1.0-SNAPSHOT}
 * @param commit  short git commit, or {@code unknown}
 */
public record BuildInfo(String version, String commit) {
    private static final BuildInfo CURRENT = load();

    /** @return the build of the running code */
    public static BuildInfo current() {
        return CURRENT;
    }

    private static BuildInfo load() {
        var props = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
            if (in != null) {
                props.load(in);
            }
        } catch (IOException e) {
            // keep "unknown"
        }
        String version = props.getProperty("version", "unknown");
        if (version.startsWith("${")) {
            version = "unknown"; // resources not filtered (e.g. run from an IDE)
        }
        String commit = System.getProperty("rdmablock.commit", System.getenv("RDMABLOCK_COMMIT"));
        return new BuildInfo(version, commit == null || commit.isBlank() ? "unknown" : commit.trim());
    }
}
