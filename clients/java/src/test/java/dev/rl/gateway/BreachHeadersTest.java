package dev.rl.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer;
import dev.rl.RealServer.Edition;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What an app reads off a response, through upstream's RedisRateLimiter and through
 * rlRateLimiter side by side on one gateway: the status (200 or 429) and every
 * {@code X-RateLimit-*} header, request by request, before and after the bucket is
 * exhausted, on a Valkey whose clock moves only by whole seconds (where the two
 * buckets are the same, see DifferentialTest). The one header rl adds, Retry-After,
 * is left out of the comparison (DifferentialTest checks it).
 */
class BreachHeadersTest {

    static final int STEPS = 6;

    /** Route pairs (upstream, rl) with the same arguments: rate, burst, requested tokens. */
    static final int[][] ROUTES = {
            {2, 5, 1},
            // Several tokens a request: a denial may leave fewer tokens than a request takes.
            {2, 5, 2},
            // More than the bucket holds: never admitted.
            {1, 2, 3},
    };

    static List<String> args(RealServer server) {
        List<String> args = new ArrayList<>();
        for (int i = 0; i < ROUTES.length; i++) {
            int[] r = ROUTES[i];
            args.addAll(Gateway.route(2 * i, "up" + i, "/up" + i + "/**", "redisRateLimiter", r[0], r[1], r[2]));
            args.addAll(Gateway.route(2 * i + 1, "rl" + i, "/rl" + i + "/**", "rlRateLimiter", r[0], r[1], r[2]));
        }
        args.add("--spring.data.redis.host=127.0.0.1");
        args.add("--spring.data.redis.port=" + server.port);
        return args;
    }

    @ParameterizedTest
    @EnumSource(Edition.class)
    void after_a_breach_status_and_rate_limit_headers_are_upstreams(Edition edition) {
        try (RealServer server = RealServer.startClocked(edition); Gateway gateway = Gateway.start(args(server))) {
            Random random = new Random(11);
            int denials = 0;
            int admittedAfterDenial = 0;
            for (int step = 0; step < STEPS; step++) {
                server.advance(1000L * random.nextInt(3));
                for (int route = 0; route < ROUTES.length; route++) {
                    boolean denied = false;
                    // Enough requests to exhaust the bucket at every step.
                    for (int i = 0; i < ROUTES[route][1] + 2; i++) {
                        String where = "step " + step + ", route " + route + ", request " + i;
                        Map<String, String> up = seen(gateway.get("/up" + route + "/x", "erin"));
                        Map<String, String> rl = seen(gateway.get("/rl" + route + "/x", "erin"));
                        assertEquals(up, rl, where);
                        if (up.get("status").equals("429")) {
                            denials++;
                            denied = true;
                        } else if (denied) {
                            admittedAfterDenial++;
                        }
                    }
                }
            }
            assertTrue(denials > 3 * STEPS, "every step exhausted each bucket: " + denials + " denials");
            assertEquals(0, admittedAfterDenial, "no refill within a step: the clock stood still");
            assertTrue(gateway.reachedBackend() > 0);
        }
    }

    /** The status and the X-RateLimit-* headers, by lower-case name. */
    static Map<String, String> seen(HttpResponse<String> response) {
        Map<String, String> seen = new TreeMap<>();
        seen.put("status", Integer.toString(response.statusCode()));
        response.headers().map().forEach((name, values) -> {
            String lower = name.toLowerCase(Locale.ROOT);
            if (lower.startsWith("x-ratelimit-")) {
                seen.put(lower, String.join(",", values));
            }
        });
        assertTrue(seen.size() == 5, "the status and four X-RateLimit-* headers: " + seen);
        return seen;
    }
}
