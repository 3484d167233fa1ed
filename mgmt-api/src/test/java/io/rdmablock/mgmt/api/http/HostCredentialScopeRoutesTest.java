package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.HostCredentials;
import io.rdmablock.mgmt.api.cluster.NodeCredentials;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.HostCredential;
import io.rdmablock.mgmt.client.IssuedHostCredential;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Host credentials and their scope (docs/authentication.md, "Credentials and scopes"). */
@ExtendWith(VertxExtension.class)
class HostCredentialScopeRoutesTest {
    static final String H1 = "nqn.2014-08.org.example:h1";
    static final String H2 = "nqn.2014-08.org.example:h2";
    private ApiHarness api;
    private IssuedHostCredential h1;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness().deploy(vertx);
        api.register("n1", 1L << 30);
        create("mine", H1);
        create("theirs", H2);
        create("nobody"); // an empty allow-list admits no host credential
        h1 = issue(H1);
    }

    private void create(String name, String... hosts) throws Exception {
        String list = String.join(",", Arrays.stream(hosts).map(h -> "\"" + h + "\"").toList());
        var r = api.send("POST", "/v1/volumes", "{\"name\":\"" + name + "\",\"sizeBytes\":1048576,"
                + "\"allowedHosts\":[" + list + "]}");
        assertEquals(201, r.statusCode(), r.body());
    }

    private IssuedHostCredential issue(String nqn) throws Exception {
        var r = api.send("POST", "/v1/host-credentials", "{\"hostNqn\":\"" + nqn + "\"}");
        assertEquals(201, r.statusCode(), r.body());
        assertEquals("no-store", r.headers().firstValue("Cache-Control").orElse(""));
        IssuedHostCredential issued = Json.read(r.body(), IssuedHostCredential.class);
        assertEquals("/v1/host-credentials/" + issued.id(), r.headers().firstValue("Location").orElse(""));
        return issued;
    }

    private HttpResponse<String> as(String method, String path, String body, String token) throws Exception {
        return api.send(method, path, body, token, "application/json");
    }

    private HttpResponse<String> report(String volume, String reporter, String token) throws Exception {
        return as("POST", "/v1/volumes/" + volume + "/copies/n1/unreachable",
                "{\"epoch\":0,\"reporter\":\"" + reporter + "\"}", token);
    }

    private static void assertInsufficientScope(HttpResponse<String> r) {
        assertProblem(r, 403, ProblemTypes.FORBIDDEN);
        assertTrue(r.headers().firstValue("WWW-Authenticate").orElse("").contains("error=\"insufficient_scope\""),
                r.headers().toString());
    }

    @Test
    void shouldIssueACredentialOfTheDocumentedShapeAndStoreOnlyItsHash() throws Exception {
        assertTrue(h1.credential().matches("rbh1:" + h1.id() + ":[A-Za-z0-9_-]{43}"), "shape");
        assertTrue(h1.id().matches("[a-z0-9][a-z0-9._-]{0,62}"), h1.id());
        assertEquals(H1, h1.hostNqn());
        var stored = api.store.hostCredential(h1.id()).orElseThrow();
        assertEquals(NodeCredentials.hash(h1.credential()), stored.credentialHash());
        assertFalse(Json.write(stored).contains(h1.credential().substring(h1.credential().lastIndexOf(':') + 1)));
        var list = api.send("GET", "/v1/host-credentials", null);
        assertEquals(200, list.statusCode(), list.body());
        assertFalse(list.body().contains(h1.credential()), "never the credential");
        assertFalse(list.body().contains(stored.credentialHash()), "nor its hash");
        List<HostCredential> listed = Arrays.asList(Json.read(list.body(), HostCredential[].class));
        assertEquals(List.of(new HostCredential(h1.id(), H1, h1.createdAt())), listed);
    }

    @Test
    void shouldRefuseAMalformedHostNqnNamingTheField() throws Exception {
        var r = api.send("POST", "/v1/host-credentials", "{\"hostNqn\":\"not-an-nqn\"}");
        var p = assertProblem(r, 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("hostNqn"), p.detail());
        assertEquals(1, api.store.hostCredentials().size(), "only the one of the set-up");
    }

    @Test
    void shouldReadOnlyTheVolumesThatAdmitItsHost() throws Exception {
        var mine = as("GET", "/v1/volumes/mine", null, h1.credential());
        assertEquals(200, mine.statusCode(), mine.body());
        assertEquals("host", mine.headers().firstValue(BearerAuth.SCOPE_HEADER).orElse(""));
        assertEquals("mine", Json.read(mine.body(), Volume.class).name());
        var theirs = as("GET", "/v1/volumes/theirs", null, h1.credential());
        assertProblem(theirs, 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertFalse(theirs.body().contains(H2), theirs.body());
        assertProblem(as("GET", "/v1/volumes/nobody", null, h1.credential()), 404, ProblemTypes.VOLUME_NOT_FOUND);
        var missing = as("GET", "/v1/volumes/absent", null, h1.credential());
        assertEquals(Json.read(theirs.body(), io.rdmablock.mgmt.client.Problem.class).type(),
                Json.read(missing.body(), io.rdmablock.mgmt.client.Problem.class).type(), "not told apart");
        var list = as("GET", "/v1/volumes", null, h1.credential());
        assertEquals(200, list.statusCode(), list.body());
        assertEquals(List.of("mine"), Arrays.stream(Json.read(list.body(), Volume[].class)).map(Volume::name)
                .toList());
        assertEquals(3, Json.read(api.get("/v1/volumes").body(), Volume[].class).length, "the read token sees all");
    }

    @Test
    void shouldAdmitAHostToAVolumeListingAnyHost() throws Exception {
        api.store.putVolume(new VolumeRecord("id-any", "any", 1L << 20, 4096, 1, List.of(HostCredentials.ANY_HOST),
                "n1", VolumeState.READY, List.of(), 1234, false, 1, 1,
                List.of(new CopyRecord("n1", CopyRole.PRIMARY, CopyState.IN_SYNC, false)), false,
                VolumeRecord.HOSTS_VERSION));
        assertEquals(200, as("GET", "/v1/volumes/any", null, h1.credential()).statusCode());
        assertEquals(200, report("any", H1, h1.credential()).statusCode());
    }

    @Test
    void shouldReportUnreachableOnlyForItsVolumesAndAsItsHost() throws Exception {
        var own = report("mine", H1, h1.credential());
        assertEquals(200, own.statusCode(), own.body());
        Volume v = api.volume("mine");
        assertTrue(api.cluster.unreachableReported(v.id(), "n1"), "recorded");
        assertProblem(report("theirs", H1, h1.credential()), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertFalse(api.cluster.unreachableReported(api.volume("theirs").id(), "n1"), "not recorded");
        var posing = report("mine", H2, h1.credential());
        assertProblem(posing, 403, ProblemTypes.FORBIDDEN);
        assertProblem(report("mine", "n1", h1.credential()), 403, ProblemTypes.FORBIDDEN); // posing as a node
    }

    @Test
    void shouldRefuseAHostCredentialOnEveryOperatorRoute() throws Exception {
        String c = h1.credential();
        assertInsufficientScope(as("POST", "/v1/volumes", "{\"name\":\"v2\",\"sizeBytes\":1048576}", c));
        assertInsufficientScope(as("DELETE", "/v1/volumes/mine", null, c));
        assertInsufficientScope(as("PATCH", "/v1/volumes/mine", "{\"sizeBytes\":2097152}", c));
        assertInsufficientScope(as("POST", "/v1/volumes/mine/promote", "{\"nodeId\":\"n1\"}", c));
        assertInsufficientScope(as("GET", "/v1/volumes/mine/verify", null, c));
        assertInsufficientScope(as("POST", "/v1/volumes/mine/copies/n1/stale", "{\"epoch\":1,\"reporter\":\"n1\"}",
                c));
        assertInsufficientScope(as("GET", "/v1/hosts", null, c));
        assertInsufficientScope(as("PUT", "/v1/hosts/nqn.2014-08.org.example%3Ah1",
                "{\"dhchapSecret\":\"DHHC-1:00:x:\"}", c));
        assertInsufficientScope(as("GET", "/v1/nodes", null, c));
        assertInsufficientScope(as("POST", "/v1/nodes", "{\"nodeId\":\"n9\",\"fabricAddress\":\"127.0.0.1:4499\","
                + "\"capacityBytes\":1073741824,\"freeBytes\":1073741824}", c));
        assertInsufficientScope(as("POST", "/v1/nodes/n1/heartbeat", "{\"freeBytes\":1,\"volumes\":[]}", c));
        assertInsufficientScope(as("POST", "/v1/nodes/n1/drain", null, c));
        assertInsufficientScope(as("POST", "/v1/host-credentials", "{\"hostNqn\":\"" + H2 + "\"}", c));
        assertInsufficientScope(as("GET", "/v1/host-credentials", null, c));
        assertInsufficientScope(as("DELETE", "/v1/host-credentials/" + h1.id(), null, c));
        assertEquals(3, api.store.volumes().size(), "nothing created or removed");
        assertEquals(1, api.store.hostCredentials().size(), "nothing issued or revoked");
        assertEquals(1, api.store.nodes().size());
    }

    @Test
    void shouldAnswerARevokedOrUnknownCredential401() throws Exception {
        IssuedHostCredential other = issue(H1);
        assertEquals(204, api.send("DELETE", "/v1/host-credentials/" + h1.id(), null).statusCode());
        for (var r : List.of(as("GET", "/v1/volumes/mine", null, h1.credential()),
                report("mine", H1, h1.credential()))) {
            assertProblem(r, 401, ProblemTypes.UNAUTHORIZED);
            assertTrue(r.headers().firstValue("WWW-Authenticate").orElse("").contains("invalid_token"));
            assertTrue(r.headers().firstValue(BearerAuth.SCOPE_HEADER).isEmpty());
        }
        assertEquals(200, as("GET", "/v1/volumes/mine", null, other.credential()).statusCode(), "the other stays");
        String forged = other.credential().substring(0, other.credential().length() - 4)
                + (other.credential().endsWith("AAAA") ? "BBBB" : "AAAA");
        assertProblem(as("GET", "/v1/volumes/mine", null, forged), 401, ProblemTypes.UNAUTHORIZED);
        String unknown = "rbh1:nosuchid:" + other.credential().substring(other.credential().lastIndexOf(':') + 1);
        assertProblem(as("GET", "/v1/volumes/mine", null, unknown), 401, ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("DELETE", "/v1/host-credentials/" + h1.id(), null), 404, ProblemTypes.NOT_FOUND);
    }
}
