package dev.rl.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.EditionTest;
import dev.rl.RealCluster;
import dev.rl.RealServer;
import dev.rl.RealServer.Edition;
import dev.rl.RealServer.Flavor;
import io.lettuce.core.cluster.SlotHash;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * rlRateLimiter in a real gateway app in front of a local backend, over HTTP, on each
 * edition, on standalone servers and on a Cluster (Lettuce's cluster client, as
 * Spring configures it from spring.data.redis.cluster.nodes).
 *
 * <p>The servers' clocks are real here, so the bucket refills slowly: 300 tokens, 60
 * per request, 1 a second; a burst admits exactly 5 unless a minute passes.
 */
class GatewayTest {

    static Stream<Arguments> setups() {
        return Stream.of(
                Arguments.of(Flavor.VALKEY9, Edition.MODULE, false),
                Arguments.of(Flavor.VALKEY9, Edition.FUNCTIONS, false),
                Arguments.of(Flavor.REDIS7, Edition.MODULE, false),
                Arguments.of(Flavor.REDIS7, Edition.FUNCTIONS, false),
                Arguments.of(Flavor.VALKEY9, Edition.MODULE, true),
                Arguments.of(Flavor.VALKEY9, Edition.FUNCTIONS, true));
    }

    @ParameterizedTest(name = "{0} {1} cluster={2}")
    @MethodSource("setups")
    void burst_admits_the_bucket_then_429_with_headers_and_retry_after(Flavor flavor, Edition edition,
            boolean cluster) {
        RealServer server = null;
        RealCluster nodes = null;
        List<String> args = new ArrayList<>(Gateway.route(0, "api", "/api/**", "rlRateLimiter", 1, 300, 60));
        if (cluster) {
            nodes = RealCluster.start(flavor, edition);
            args.add("--spring.data.redis.cluster.nodes=" + nodes.nodeList());
        } else {
            server = RealServer.start(flavor, edition);
            args.add("--spring.data.redis.host=127.0.0.1");
            args.add("--spring.data.redis.port=" + server.port);
        }
        try (RealServer s = server; RealCluster c = nodes; Gateway gateway = Gateway.start(args)) {
            // One user per third of the slots: on a Cluster, one key on each node.
            List<String> users = usersOnEachThirdOfTheSlots("api");
            for (String user : users) {
                for (int i = 1; i <= 5; i++) {
                    HttpResponse<String> r = gateway.get("/api/hello", user);
                    assertEquals(200, r.statusCode(), user + " request " + i);
                    assertEquals("ok", r.body());
                    assertEquals(Long.toString(300 - 60L * i), header(r, "X-RateLimit-Remaining"));
                    assertEquals("1", header(r, "X-RateLimit-Replenish-Rate"));
                    assertEquals("300", header(r, "X-RateLimit-Burst-Capacity"));
                    assertEquals("60", header(r, "X-RateLimit-Requested-Tokens"));
                    assertNull(header(r, "Retry-After"));
                }
                HttpResponse<String> denied = gateway.get("/api/hello", user);
                assertEquals(429, denied.statusCode(), user + " request 6");
                assertEquals("0", header(denied, "X-RateLimit-Remaining"));
                long retry = Long.parseLong(header(denied, "Retry-After"));
                assertTrue(retry >= 1 && retry <= 60, "Retry-After " + retry);
            }
            assertEquals(15, gateway.reachedBackend());
            // No user header: the key resolver gives nothing and the gateway refuses
            // (deny-empty-key), before any rate limiter runs.
            assertEquals(403, gateway.get("/api/hello", null).statusCode());
            if (c != null) {
                for (String user : users) {
                    assertEquals(1, c.nodesHolding(key("api", user)), user + "'s key is on one node");
                }
            } else {
                String value = s.with(conn -> conn.sync().get(key("api", users.get(0))));
                assertTrue(value.matches("[0-9]{16}"), "a TAT in µs: " + value);
            }
        }
    }

    /**
     * The gateway as a user made by the README's ACL recipe plus docs/clients.md's
     * line for the gateway's keys, both as written (Valkey 9.1: module ACL categories):
     * the requests are limited as for the default user, and nothing else is needed.
     */
    @Test
    void the_readme_acl_recipe_and_the_gateways_key_pattern_are_enough() throws Exception {
        List<String> recipe = EditionTest.readmeRecipe();
        String clients = Files.readString(
                RealServer.requiredDir("rl.root", "the repository root").resolve("docs/clients.md"));
        Matcher line = Pattern.compile("\n(ACL SETUSER \\S+ ~request_rate_limiter\\S*)\n").matcher(clients);
        assertTrue(line.find(), "docs/clients.md has no `ACL SETUSER ... ~request_rate_limiter...` line");
        List<String> keys = List.of(line.group(1).split(" "));
        assertEquals(recipe.get(2), keys.get(2), "the line grants the recipe's user");
        String password = EditionTest.password(recipe);
        List<String> args = new ArrayList<>(Gateway.route(0, "api", "/api/**", "rlRateLimiter", 1, 300, 60));
        try (RealServer server = RealServer.start(Flavor.VALKEY9, Edition.MODULE)) {
            EditionTest.acl(server, recipe);
            EditionTest.acl(server, keys);
            args.add("--spring.data.redis.host=127.0.0.1");
            args.add("--spring.data.redis.port=" + server.port);
            args.add("--spring.data.redis.username=" + recipe.get(2));
            args.add("--spring.data.redis.password=" + password);
            try (Gateway gateway = Gateway.start(args)) {
                for (int i = 1; i <= 5; i++) {
                    HttpResponse<String> r = gateway.get("/api/hello", "acl");
                    assertEquals(200, r.statusCode(), "request " + i);
                    assertEquals(Long.toString(300 - 60L * i), header(r, "X-RateLimit-Remaining"));
                }
                HttpResponse<String> denied = gateway.get("/api/hello", "acl");
                assertEquals(429, denied.statusCode(), "request 6");
                assertEquals("0", header(denied, "X-RateLimit-Remaining"));
                assertEquals(5, gateway.reachedBackend());
            }
            String value = server.with(c -> c.sync().get(key("api", "acl")));
            assertTrue(value != null && value.matches("[0-9]{16}"), "a TAT in µs: " + value);
        }
    }

    static String key(String route, String user) {
        return "request_rate_limiter.{" + route + "." + user + "}.rl";
    }

    /** Users whose keys fall in slots 0-5460, 5461-10922, 10923-16383: redis-cli's three nodes. */
    static List<String> usersOnEachThirdOfTheSlots(String route) {
        List<String> users = new ArrayList<>();
        int[] upper = {5460, 10922, 16383};
        int third = 0;
        for (int n = 0; third < 3; n++) {
            String user = "user" + n;
            int slot = SlotHash.getSlot(key(route, user));
            if (slot <= upper[third] && (third == 0 || slot > upper[third - 1])) {
                users.add(user);
                third++;
            }
        }
        return users;
    }

    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }
}
