package dev.rl.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer;
import dev.rl.RealServer.Edition;
import dev.rl.RealServer.Flavor;
import dev.rl.SwapTest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The gateway while its server changes under it (restarted on the same port with the
 * other edition, or with neither) and on a server without rl from its start: the same
 * behaviour either way. With rl, the route limits in whatever edition the server has
 * now, the gateway never restarted; without rl, the gateway does what upstream's
 * RedisRateLimiter does on a server it cannot use, letting the request through with
 * {@code X-RateLimit-Remaining: -1}, and the log says once, not per request, what to load.
 */
class GatewaySwapTest {

    // A bucket of 180 tokens, 60 per request, refilled at 1 a second: 3 requests, then 429.
    static List<String> args(RealServer server) {
        List<String> args = new ArrayList<>(Gateway.route(0, "api", "/api/**", "rlRateLimiter", 1, 180, 60));
        args.add("--spring.data.redis.host=127.0.0.1");
        args.add("--spring.data.redis.port=" + server.port);
        return args;
    }

    static void limits(Gateway gateway, String user, String what) {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = gateway.get("/api/hello", user);
            assertEquals(200, r.statusCode(), what + ": request " + i);
            assertEquals(Long.toString(180 - 60L * i), GatewayTest.header(r, "X-RateLimit-Remaining"), what);
        }
        assertEquals(429, gateway.get("/api/hello", user).statusCode(), what + ": request 4");
    }

    static void letsThrough(Gateway gateway, SwapTest.NotLoadedLog log, String what) {
        int before = gateway.reachedBackend();
        for (int i = 1; i <= 4; i++) {
            HttpResponse<String> r = gateway.get("/api/hello", "someone");
            assertEquals(200, r.statusCode(), what + ": request " + i);
            assertEquals("-1", GatewayTest.header(r, "X-RateLimit-Remaining"), what);
        }
        assertEquals(before + 4, gateway.reachedBackend(), what);
        assertEquals(1, log.lines.size(), what + ": logged once, not per request: " + log.lines);
        assertTrue(SwapTest.HOW_TO.matcher(log.lines.get(0)).find(), log.lines.get(0));
    }

    @Test
    void a_running_gateway_follows_its_server() {
        String[] steps = {"MODULE", "FUNCTIONS", "MODULE", "NEITHER", "FUNCTIONS", "NEITHER", "MODULE"};
        RealServer server = RealServer.start(Flavor.VALKEY9, Edition.MODULE);
        try (SwapTest.NotLoadedLog log = new SwapTest.NotLoadedLog(); Gateway gateway = Gateway.start(args(server))) {
            for (int step = 0; step < steps.length; step++) {
                String what = "step " + step + ", " + steps[step];
                if (step > 0) {
                    server = server.restartAs(SwapTest.edition(steps[step]));
                }
                log.lines.clear();
                if (steps[step].equals("NEITHER")) {
                    letsThrough(gateway, log, what);
                } else {
                    limits(gateway, "user", what);
                    assertEquals(List.of(), log.lines, what);
                }
            }
        } finally {
            server.close();
        }
    }

    @Test
    void a_fresh_gateway_on_a_server_without_rl_does_the_same_until_rl_is_loaded() {
        try (RealServer server = RealServer.start(Flavor.VALKEY9, null);
                SwapTest.NotLoadedLog log = new SwapTest.NotLoadedLog();
                Gateway gateway = Gateway.start(args(server))) {
            letsThrough(gateway, log, "without rl");
            server.loadLibrary();
            limits(gateway, "user", "the library loaded");
        }
    }
}
