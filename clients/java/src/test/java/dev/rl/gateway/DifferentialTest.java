package dev.rl.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer;
import dev.rl.RealServer.Edition;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The same overload sequence through upstream's RedisRateLimiter and through
 * rlRateLimiter, on one gateway (two routes, one per limiter, same arguments), on
 * one Valkey whose clock stands still and moves only when the test steps it.
 *
 * <p>Upstream's script reads the server's clock in whole seconds and refills
 * {@code replenishRate} tokens at each second's turn; RL.THROTTLE refills
 * continuously (one token every {@code 1000 / replenishRate} ms). Stepped by whole
 * seconds from a whole second, the two are the same bucket and admit exactly the
 * same requests. Stepped by fractions, rl may admit a token up to a second earlier
 * than upstream; the totals never differ by more than {@code replenishRate}.
 */
class DifferentialTest {

    static final int RATE = 2;
    static final int BURST = 5;

    List<String> args(RealServer server) {
        List<String> args = new ArrayList<>();
        args.addAll(Gateway.route(0, "up", "/up/**", "redisRateLimiter", RATE, BURST, 1));
        args.addAll(Gateway.route(1, "rl", "/rl/**", "rlRateLimiter", RATE, BURST, 1));
        args.add("--spring.data.redis.host=127.0.0.1");
        args.add("--spring.data.redis.port=" + server.port);
        return args;
    }

    @ParameterizedTest
    @EnumSource(Edition.class)
    void whole_second_steps_admit_exactly_what_redis_rate_limiter_admits(Edition edition) {
        try (RealServer server = RealServer.startClocked(edition); Gateway gateway = Gateway.start(args(server))) {
            Random random = new Random(42);
            int total = 0;
            for (int step = 0; step < 40; step++) {
                server.advance(1000L * random.nextInt(4));
                int n = random.nextInt(BURST + 2 * RATE + 1);
                int up = gateway.admitted("/up/x", "alice", n);
                int rl = gateway.admitted("/rl/x", "alice", n);
                assertEquals(up, rl, "step " + step + ": " + n + " requests");
                total += rl;
            }
            // The sequence did overload the bucket: some were denied, many admitted.
            assertTrue(total > BURST && total < gateway.reachedBackend(), "admitted " + total);
            assertEquals(2 * total, gateway.reachedBackend());
            String tokens = server.with(c -> c.sync().get("request_rate_limiter.{up.alice}.tokens"));
            assertTrue(tokens != null, "upstream's own keys were written: its script ran");
        }
    }

    @ParameterizedTest
    @EnumSource(Edition.class)
    void sub_second_steps_differ_by_at_most_one_seconds_refill(Edition edition) {
        try (RealServer server = RealServer.startClocked(edition); Gateway gateway = Gateway.start(args(server))) {
            Random random = new Random(7);
            int up = 0;
            int rl = 0;
            for (int step = 0; step < 60; step++) {
                server.advance(100 + random.nextInt(1400));
                int n = random.nextInt(BURST + 1);
                up += gateway.admitted("/up/x", "bob", n);
                rl += gateway.admitted("/rl/x", "bob", n);
                assertTrue(Math.abs(up - rl) <= RATE, "step " + step + ": upstream " + up + ", rl " + rl);
            }
            assertTrue(up > BURST && rl > BURST, "both admitted beyond the burst: " + up + ", " + rl);
        }
    }

    @ParameterizedTest
    @EnumSource(Edition.class)
    void a_denial_says_when_to_retry(Edition edition) {
        try (RealServer server = RealServer.startClocked(edition); Gateway gateway = Gateway.start(args(server))) {
            assertEquals(BURST, gateway.admitted("/rl/x", "carol", BURST + 3));
            HttpResponse<String> denied = gateway.get("/rl/x", "carol");
            assertEquals(429, denied.statusCode());
            // One token every 500 ms: retry after 500 ms, rounded up to a second.
            assertEquals("1", GatewayTest.header(denied, "Retry-After"));
            assertEquals("0", GatewayTest.header(denied, "X-RateLimit-Remaining"));
            server.advance(499);
            assertEquals(429, gateway.get("/rl/x", "carol").statusCode());
            server.advance(1);
            HttpResponse<String> admitted = gateway.get("/rl/x", "carol");
            assertEquals(200, admitted.statusCode());
            assertEquals("0", GatewayTest.header(admitted, "X-RateLimit-Remaining"));
            // Upstream's 429 carries no Retry-After: rl adds it.
            assertEquals(BURST, gateway.admitted("/up/x", "carol", BURST + 1));
            HttpResponse<String> upstream = gateway.get("/up/x", "carol");
            assertEquals(429, upstream.statusCode());
            assertEquals(null, GatewayTest.header(upstream, "Retry-After"));
        }
    }
}
