package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer.Edition;
import dev.rl.RealServer.Flavor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every RlCommands verb against a real server, on the module and on the function
 * library, and one Cluster case. Windows are a minute long, so the real clock
 * cannot move a count within a test.
 */
class RlCommandsTest {

    static Stream<Arguments> servers() {
        return Stream.of(Arguments.of(Flavor.VALKEY9, Edition.MODULE), Arguments.of(Flavor.VALKEY9, Edition.FUNCTIONS),
                Arguments.of(Flavor.REDIS7, Edition.MODULE), Arguments.of(Flavor.REDIS7, Edition.FUNCTIONS));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("servers")
    void every_verb_answers_typed_on_both_editions(Flavor flavor, Edition edition) {
        RedisClient client = null;
        try (RealServer server = RealServer.start(flavor, edition)) {
            client = RedisClient.create(RedisURI.create("127.0.0.1", server.port));
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                RlCommands rl = RlCommands.of(c);
                assertEquals(edition.name(), rl.edition().toCompletableFuture().join().name());
                verbs(rl);
            }
        } finally {
            if (client != null) {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    static void verbs(RlCommands rl) {
        // SLIDE: 2 a minute.
        assertEquals(new Decision(true, 1, 0, 60_000, 1), rl.slide("s", 2, 60_000));
        assertTrue(rl.slide("s", 2, 60_000).allowed());
        Decision denied = rl.slide("s", 2, 60_000);
        assertFalse(denied.allowed());
        assertEquals(0, denied.remaining());
        assertTrue(denied.retryAfterMs() > 0 && denied.retryAfterMs() <= 60_000);
        assertFalse(rl.peek("s", Clause.slide(2, 60_000)).allowed());
        Decision refunded = rl.refund("s", Clause.slide(2, 60_000));
        assertTrue(refunded.allowed());
        assertEquals(1, refunded.granted());
        assertEquals(0, refunded.remaining(), "what one more unit would leave");
        assertTrue(rl.peek("s", Clause.slide(2, 60_000)).allowed());
        // UPTO: a request of 3 on a fresh limit of 2 takes the 2 that fit.
        Decision partial = rl.slide("u", 2, 60_000, Option.cost(3), Option.upto());
        assertTrue(partial.allowed());
        assertEquals(2, partial.granted());

        // BUCKETS with COST.
        Decision b = rl.buckets("b", 3, 60_000, Option.cost(2));
        assertTrue(b.allowed());
        assertEquals(1, b.remaining());
        assertEquals(2, b.granted());
        assertFalse(rl.buckets("b", 3, 60_000, Option.cost(2)).allowed());

        // THROTTLE: a bucket of 2, one token a minute.
        assertEquals(1, rl.throttle("t", 1, 1, 60_000, 1).remaining());
        assertEquals(0, rl.throttle("t", 1, 1, 60_000, 1).remaining());
        Decision t = rl.throttle("t", 1, 1, 60_000, 1);
        assertFalse(t.allowed());
        assertTrue(t.retryAfterMs() > 59_000 && t.retryAfterMs() <= 60_000, "retry " + t.retryAfterMs());

        // FIXED, then CHARGE past the limit.
        assertTrue(rl.fixed("f", 1, 60_000).allowed());
        assertFalse(rl.fixed("f", 1, 60_000).allowed());
        Decision charged = rl.charge("f", Clause.fixed(1, 60_000), 5);
        assertTrue(charged.allowed());
        assertEquals(5, charged.granted());
        assertEquals(0, charged.remaining());

        // BLOCK and UNBLOCK.
        long end = rl.block("k", Limiter.THROTTLE, 60_000);
        assertTrue(end > System.currentTimeMillis() - 60_000);
        Decision blocked = rl.throttle("k", 9, 10, 1000, 1);
        assertFalse(blocked.allowed());
        assertTrue(blocked.retryAfterMs() > 59_000);
        assertTrue(rl.unblock("k", Limiter.THROTTLE));
        assertFalse(rl.unblock("k", Limiter.THROTTLE));
        assertTrue(rl.throttle("k", 9, 10, 1000, 1).allowed());

        // Leases: one slot.
        Lease lease = rl.acquire("l", 1, 60_000);
        assertTrue(lease.allowed());
        assertNotNull(lease.id());
        Lease none = rl.acquire("l", 1, 60_000);
        assertFalse(none.allowed());
        assertNull(none.id());
        assertTrue(rl.renew("l", lease.id(), 60_000).allowed());
        Decision released = rl.release("l", lease.id());
        assertTrue(released.allowed());
        assertEquals(0, released.remaining());
        assertTrue(rl.acquire("l", 1, 60_000, Option.id("job-7")).allowed());
        assertFalse(rl.release("l", lease.id()).allowed());

        // ALL: both or neither.
        AllDecision all = rl.all(List.of("a1", "a2"), List.of(Clause.slide(1, 60_000), Clause.throttle(0, 1, 60_000, 1)));
        assertTrue(all.allowed());
        assertEquals(2, all.clauses().size());
        assertFalse(rl.all(List.of("a1", "a2"), List.of(Clause.slide(1, 60_000), Clause.throttle(0, 1, 60_000, 1)))
                .allowed());

        // A bad argument: the server's error, naming the argument; nothing written.
        RedisCommandExecutionException error = assertThrows(RedisCommandExecutionException.class,
                () -> rl.throttle("bad", 1, 0, 1000, 1));
        assertTrue(error.getMessage().contains("count"), error.getMessage());
        assertTrue(rl.peek("bad", Clause.throttle(1, 1, 1000, 1)).allowed());
    }

    @Test
    void a_cluster_connection_routes_each_call_to_its_keys_node() {
        try (RealCluster cluster = RealCluster.start(Flavor.VALKEY9, Edition.MODULE)) {
            RedisClusterClient client = RedisClusterClient.create(
                    cluster.nodes.stream().map(n -> RedisURI.create("127.0.0.1", n.port)).toList());
            try (StatefulRedisClusterConnection<String, String> c = client.connect()) {
                RlCommands rl = RlCommands.of(c);
                for (int i = 0; i < 30; i++) {
                    assertTrue(rl.throttle("user:" + i, 0, 1, 60_000, 1).allowed());
                    assertFalse(rl.throttle("user:" + i, 0, 1, 60_000, 1).allowed());
                }
                long onNodes = cluster.nodes.stream().filter(n -> n.with(x -> x.sync().dbsize()) > 0).count();
                assertEquals(3, onNodes, "30 keys spread over the three nodes");
                assertTrue(rl.all(List.of("{o}a", "{o}b"), List.of(Clause.fixed(1, 60_000), Clause.fixed(1, 60_000)))
                        .allowed());
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }
}
