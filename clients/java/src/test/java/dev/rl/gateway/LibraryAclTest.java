package dev.rl.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.Clause;
import dev.rl.EditionTest;
import dev.rl.RealCluster;
import dev.rl.RealServer;
import dev.rl.RealServer.Edition;
import dev.rl.RealServer.Flavor;
import dev.rl.RlCommands;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * The function edition's ACL recipe (docs/operations.md), as written, is enough for
 * RlCommands and the gateway: the library's commands run as the caller, so a user made
 * by it (with docs/clients.md's line for the gateway's keys) limits on Redis 7.0 and
 * Valkey 9.1 with only the library, loaded by the default user; and, with Lettuce's
 * cluster grants from docs/operations.md on every node, on a three-node Valkey 9.1
 * cluster with the library.
 */
class LibraryAclTest {

    static String doc(String path) throws Exception {
        return Files.readString(RealServer.requiredDir("rl.root", "the repository root").resolve(path));
    }

    /** docs/operations.md's {@code ACL SETUSER ... +fcall ...} session line. */
    static List<String> libraryRecipe() throws Exception {
        Matcher m = Pattern.compile("> (ACL SETUSER \\S+ [^\\n]*\\+fcall [^\\n]*)").matcher(doc("docs/operations.md"));
        assertTrue(m.find(), "docs/operations.md has no `ACL SETUSER ... +fcall ...` line");
        return List.of(m.group(1).split(" "));
    }

    /** What docs/operations.md grants a cluster client (its line "- `+cluster|...`: client ..."). */
    static List<String> clusterGrants(String client) throws Exception {
        Matcher m = Pattern.compile("(?m)^- `(\\+[^`]+)`: (.*)$").matcher(doc("docs/operations.md"));
        List<List<String>> found = new ArrayList<>();
        while (m.find()) {
            if (m.group(2).contains(client)) {
                found.add(List.of(m.group(1).split(" ")));
            }
        }
        assertEquals(1, found.size(), "docs/operations.md's lines of cluster grants for " + client);
        return found.get(0);
    }

    /** docs/clients.md's line granting the gateway's keys. */
    static List<String> gatewayKeys() throws Exception {
        Matcher line = Pattern.compile("\n(ACL SETUSER \\S+ ~request_rate_limiter\\S*)\n").matcher(doc("docs/clients.md"));
        assertTrue(line.find(), "docs/clients.md has no `ACL SETUSER ... ~request_rate_limiter...` line");
        return List.of(line.group(1).split(" "));
    }

    /** The recipe, the gateway's keys and {@code more}, sent to {@code server} as written. */
    static void makeUser(RealServer server, List<String> recipe, List<String> more) throws Exception {
        List<String> keys = gatewayKeys();
        assertEquals(recipe.get(2), keys.get(2), "docs/clients.md's line grants the recipe's user");
        EditionTest.acl(server, recipe);
        EditionTest.acl(server, keys);
        if (!more.isEmpty()) {
            List<String> line = new ArrayList<>(List.of("ACL", "SETUSER", recipe.get(2)));
            line.addAll(more);
            EditionTest.acl(server, line);
        }
        EditionTest.acl(server, List.of("ACL", "LOG", "RESET"));
    }

    /** Five requests admitted, the sixth refused, for one user of the gateway. */
    static void burst(Gateway gateway, String user) {
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> r = gateway.get("/api/hello", user);
            assertEquals(200, r.statusCode(), user + " request " + i);
            assertEquals(Long.toString(300 - 60L * i), GatewayTest.header(r, "X-RateLimit-Remaining"));
        }
        assertEquals(429, gateway.get("/api/hello", user).statusCode(), user + " request 6");
    }

    static List<String> gatewayArgs(List<String> recipe) {
        List<String> args = new ArrayList<>(Gateway.route(0, "api", "/api/**", "rlRateLimiter", 1, 300, 60));
        args.add("--spring.data.redis.username=" + recipe.get(2));
        args.add("--spring.data.redis.password=" + EditionTest.password(recipe));
        return args;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Flavor.class)
    void the_library_recipe_is_enough_for_rlcommands_and_the_gateway(Flavor flavor) throws Exception {
        List<String> recipe = libraryRecipe();
        try (RealServer server = RealServer.start(flavor, Edition.FUNCTIONS)) {
            makeUser(server, recipe, List.of());
            RedisClient client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(server.port)
                    .withAuthentication(recipe.get(2), EditionTest.password(recipe)).build());
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                RlCommands rl = RlCommands.of(c);
                assertTrue(rl.slide("rl:java:acl", 1, 60_000).allowed());
                assertFalse(rl.slide("rl:java:acl", 1, 60_000).allowed());
                assertEquals(RlCommands.Edition.FUNCTIONS, rl.edition().toCompletableFuture().join());
                assertFalse(rl.peek("rl:java:acl", Clause.slide(1, 60_000)).allowed());
                assertTrue(rl.all(List.of("rl:{j}a", "rl:{j}b"), List.of(Clause.fixed(1, 60_000),
                        Clause.throttle(0, 1, 60_000, 1))).allowed());
                RedisCommandExecutionException outside = assertThrows(RedisCommandExecutionException.class,
                        () -> rl.slide("other:java:acl", 1, 60_000));
                assertTrue(outside.getMessage().startsWith("NOPERM"), outside.getMessage());
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            List<String> args = gatewayArgs(recipe);
            args.add("--spring.data.redis.host=127.0.0.1");
            args.add("--spring.data.redis.port=" + server.port);
            try (Gateway gateway = Gateway.start(args)) {
                burst(gateway, "acl");
                assertEquals(5, gateway.reachedBackend());
            }
            String value = server.with(c -> c.sync().get(GatewayTest.key("api", "acl")));
            assertTrue(value != null && value.matches("[0-9]{16}"), "a TAT in µs: " + value);
        }
    }

    @Test
    void the_library_recipe_and_lettuces_cluster_grants_are_enough_on_a_cluster() throws Exception {
        List<String> recipe = libraryRecipe();
        List<String> grants = clusterGrants("Lettuce");
        try (RealCluster cluster = RealCluster.start(Flavor.VALKEY9, Edition.FUNCTIONS)) {
            for (RealServer node : cluster.nodes) {
                makeUser(node, recipe, grants);
            }
            RedisClusterClient client = RedisClusterClient.create(cluster.nodes.stream()
                    .map(n -> RedisURI.builder().withHost("127.0.0.1").withPort(n.port)
                            .withAuthentication(recipe.get(2), EditionTest.password(recipe)).build())
                    .toList());
            try (StatefulRedisClusterConnection<String, String> c = client.connect()) {
                RlCommands rl = RlCommands.of(c);
                for (int i = 0; i < 30; i++) {
                    assertTrue(rl.throttle("rl:user:" + i, 0, 1, 60_000, 1).allowed());
                    assertFalse(rl.throttle("rl:user:" + i, 0, 1, 60_000, 1).allowed());
                }
                assertEquals(RlCommands.Edition.FUNCTIONS, rl.edition().toCompletableFuture().join());
                long onNodes = cluster.nodes.stream().filter(n -> n.with(x -> x.sync().dbsize()) > 0).count();
                assertEquals(3, onNodes, "30 keys spread over the three nodes");
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            List<String> args = gatewayArgs(recipe);
            args.add("--spring.data.redis.cluster.nodes=" + cluster.nodeList());
            try (Gateway gateway = Gateway.start(args)) {
                List<String> users = GatewayTest.usersOnEachThirdOfTheSlots("api");
                for (String user : users) {
                    burst(gateway, user);
                }
                assertEquals(5 * users.size(), gateway.reachedBackend());
                for (String user : users) {
                    assertEquals(1, cluster.nodesHolding(GatewayTest.key("api", user)), user + "'s key is on one node");
                }
            }
            // Refused along the way: only what Lettuce goes on without.
            Set<String> refused = new HashSet<>();
            for (RealServer node : cluster.nodes) {
                node.with(c -> c.sync().aclLog()).forEach(entry -> refused.add(String.valueOf(entry.get("object"))));
            }
            assertTrue(Set.of("client|setinfo", "client|setname", "info", "cluster|myid").containsAll(refused),
                    "refused " + refused);
        }
    }
}
