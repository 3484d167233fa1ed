package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Host;
import io.rdmablock.mgmt.client.HostSecret;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.nvme.auth.DhchapSecret;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code /v1/hosts} (DH-HMAC-CHAP secrets), requireAuth on volumes and their delivery in heartbeat answers. */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class HostRoutesTest {
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private static final String NQN = "nqn.2014-08.org.nvmexpress:uuid:6a3c0f3e-1111-2222-3333-444455556666";
    private static final SecureRandom RANDOM = new SecureRandom();
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
        api.register("n1", 1024 * MIB);
    }

    private static String path(String nqn) {
        return "/v1/hosts/" + URLEncoder.encode(nqn, StandardCharsets.UTF_8);
    }

    private static String secret(int hh, int keyBytes) {
        return DhchapSecret.generate(hh, keyBytes, RANDOM).encoded();
    }

    private static String body(String secret, String ctrl) {
        return ctrl == null ? "{\"dhchapSecret\":\"" + secret + "\"}"
                : "{\"dhchapSecret\":\"" + secret + "\",\"dhchapCtrlSecret\":\"" + ctrl + "\"}";
    }

    @Test
    void shouldSetAHostAndAnswerItWithoutTheSecret() throws Exception {
        String s = secret(1, 32);
        var r = api.send("PUT", path(NQN), body(s, null));
        assertEquals(201, r.statusCode(), r.body());
        assertFalse(r.body().contains(s.substring(10, 30)), r.body());
        Host h = Json.read(r.body(), Host.class);
        assertEquals(NQN, h.hostNqn());
        assertEquals("sha256", h.hash());
        assertEquals(32, h.keyBytes());
        assertFalse(h.bidirectional());
        assertEquals(16, h.fingerprint().length());
        assertTrue(h.revision() >= 1);

        var got = api.get(path(NQN));
        assertEquals(200, got.statusCode(), got.body());
        assertEquals(h, Json.read(got.body(), Host.class));
        var list = api.get("/v1/hosts");
        assertEquals(200, list.statusCode(), list.body());
        assertFalse(list.body().contains("DHHC-1"), list.body());
        assertEquals(List.of(h), List.of(Json.MAPPER.readValue(list.body(), Host[].class)));
    }

    @Test
    void shouldReplaceAHostWithANewRevisionAndFingerprint() throws Exception {
        Host first = Json.read(api.send("PUT", path(NQN), body(secret(1, 32), null)).body(), Host.class);
        var r = api.send("PUT", path(NQN), body(secret(3, 64), secret(2, 48)));
        assertEquals(200, r.statusCode(), r.body());
        Host second = Json.read(r.body(), Host.class);
        assertTrue(second.revision() > first.revision(), second + " after " + first);
        assertTrue(second.bidirectional());
        assertEquals("sha512", second.hash());
        assertFalse(first.fingerprint().equals(second.fingerprint()));
    }

    @Test
    void shouldRemoveAHost() throws Exception {
        api.send("PUT", path(NQN), body(secret(0, 48), null));
        var r = api.send("DELETE", path(NQN), null);
        assertEquals(204, r.statusCode(), r.body());
        assertProblem(api.get(path(NQN)), 404, ProblemTypes.HOST_NOT_FOUND);
        assertProblem(api.send("DELETE", path(NQN), null), 404, ProblemTypes.HOST_NOT_FOUND);
        assertEquals("[]", api.get("/v1/hosts").body());
    }

    @Test
    void shouldRejectAMalformedSecretNamingTheFieldAndNotTheKey() throws Exception {
        String good = secret(1, 32);
        String badCrc = good.substring(0, 20) + (good.charAt(20) == 'A' ? 'B' : 'A') + good.substring(21);
        var p = assertProblem(api.send("PUT", path(NQN), body(badCrc, null)), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().startsWith("invalid dhchapSecret: "), p.detail());
        assertFalse(p.detail().contains(badCrc.substring(7, 40)), p.detail());
        p = assertProblem(api.send("PUT", path(NQN), body(good, "DHHC-1:07:abc:")), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().startsWith("invalid dhchapCtrlSecret: "), p.detail());
        assertProblem(api.get(path(NQN)), 404, ProblemTypes.HOST_NOT_FOUND);
    }

    @Test
    void shouldRejectAMissingSecretNamingTheField() throws Exception {
        var p = assertProblem(api.send("PUT", path(NQN), "{}"), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("dhchapSecret"), p.detail());
    }

    @Test
    void shouldRejectAMalformedHostNqnNamingTheParameter() throws Exception {
        var p = assertProblem(api.send("PUT", path("not-an-nqn"), body(secret(1, 32), null)), 400,
                ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("hostNqn"), p.detail());
        p = assertProblem(api.get(path("nqn.bad")), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("hostNqn"), p.detail());
    }

    @Test
    void shouldRefuseHostWritesWithTheReadToken() throws Exception {
        var r = api.send("PUT", path(NQN), body(secret(1, 32), null), ApiHarness.READ_TOKEN, "application/json");
        assertProblem(r, 403, ProblemTypes.FORBIDDEN);
        assertProblem(api.send("DELETE", path(NQN), null, ApiHarness.READ_TOKEN, null), 403, ProblemTypes.FORBIDDEN);
        assertProblem(api.send("GET", "/v1/hosts", null, null, null), 401, ProblemTypes.UNAUTHORIZED);
    }

    @Test
    void shouldCreateAVolumeRequiringAuthenticationAndTellTheNode() throws Exception {
        var r = api.send("POST", "/v1/volumes", """
                {"name":"v1","sizeBytes":%d,"requireAuth":true}""".formatted(2 * MIB));
        assertEquals(201, r.statusCode(), r.body());
        assertTrue(Json.read(r.body(), Volume.class).requireAuth());
        assertTrue(api.volume("v1").requireAuth());
        var plain = api.send("POST", "/v1/volumes", """
                {"name":"v2","sizeBytes":%d}""".formatted(2 * MIB));
        assertFalse(Json.read(plain.body(), Volume.class).requireAuth());
        HeartbeatResponse hb = api.heartbeat("n1", "[]");
        assertEquals(List.of(true, false), hb.volumes().stream().map(v -> v.requireAuth()).toList());
    }

    @Test
    void shouldSwitchRequireAuthWithPatchAndTellTheNode() throws Exception {
        api.send("POST", "/v1/volumes", "{\"name\":\"v1\",\"sizeBytes\":%d}".formatted(2 * MIB));
        var r = api.send("PATCH", "/v1/volumes/v1", "{\"requireAuth\":true}");
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(Json.read(r.body(), Volume.class).requireAuth());
        assertTrue(api.heartbeat("n1", "[]").volumes().getFirst().requireAuth());
        r = api.send("PATCH", "/v1/volumes/v1", "{\"sizeBytes\":%d,\"requireAuth\":false}".formatted(4 * MIB));
        assertEquals(200, r.statusCode(), r.body());
        Volume v = Json.read(r.body(), Volume.class);
        assertFalse(v.requireAuth());
        assertEquals(4 * MIB, v.sizeBytes());
        assertFalse(api.volume("v1").requireAuth());
    }

    @Test
    void shouldRejectANonBooleanRequireAuth() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes", """
                {"name":"v1","sizeBytes":%d,"requireAuth":"yes"}""".formatted(2 * MIB)), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("requireAuth"), p.detail());
    }

    @Test
    void shouldGiveEveryHostsSecretsToTheNodesAndFollowChanges() throws Exception {
        assertTrue(api.heartbeat("n1", "[]").hosts().isEmpty());
        String s1 = secret(1, 32);
        String c1 = secret(1, 32);
        api.send("PUT", path(NQN), body(s1, c1));
        String other = "nqn.2026-11.io.example:host-b";
        String s2 = secret(2, 48);
        api.send("PUT", path(other), body(s2, null));
        List<HostSecret> hosts = api.heartbeat("n1", "[]").hosts();
        assertEquals(List.of(NQN, other), hosts.stream().map(HostSecret::hostNqn).toList());
        assertEquals(s1, hosts.get(0).dhchapSecret());
        assertEquals(c1, hosts.get(0).dhchapCtrlSecret());
        assertEquals(s2, hosts.get(1).dhchapSecret());
        assertNull(hosts.get(1).dhchapCtrlSecret());
        assertFalse(hosts.toString().contains("DHHC-1"), hosts.toString());

        String s3 = secret(1, 32);
        api.send("PUT", path(NQN), body(s3, null));
        api.send("DELETE", path(other), null);
        hosts = api.heartbeat("n1", "[]").hosts();
        assertEquals(1, hosts.size(), hosts.toString());
        assertEquals(s3, hosts.getFirst().dhchapSecret());
        assertNull(hosts.getFirst().dhchapCtrlSecret());
    }
}
