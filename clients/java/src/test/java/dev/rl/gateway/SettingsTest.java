package dev.rl.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.rl.RealServer;
import dev.rl.RealServer.Edition;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Upstream's settings, read by rlRateLimiter as upstream reads them, and the edge configurations. */
class SettingsTest {

    @Test
    void include_headers_false_and_configurations_upstream_never_admits() {
        try (RealServer server = RealServer.startClocked(Edition.MODULE)) {
            List<String> args = new ArrayList<>();
            args.addAll(Gateway.route(0, "one", "/one/**", "rlRateLimiter", 1, 1, 1));
            // More tokens than the bucket holds: never admitted, as upstream never admits it.
            args.addAll(Gateway.route(1, "big", "/big/**", "rlRateLimiter", 1, 2, 3));
            args.add("--spring.cloud.gateway.server.webflux.redis-rate-limiter.include-headers=false");
            args.add("--spring.data.redis.host=127.0.0.1");
            args.add("--spring.data.redis.port=" + server.port);
            try (Gateway gateway = Gateway.start(args)) {
                HttpResponse<String> ok = gateway.get("/one/x", "dan");
                assertEquals(200, ok.statusCode());
                assertNull(GatewayTest.header(ok, "X-RateLimit-Remaining"));
                HttpResponse<String> denied = gateway.get("/one/x", "dan");
                assertEquals(429, denied.statusCode());
                assertNull(GatewayTest.header(denied, "X-RateLimit-Remaining"));
                assertEquals("1", GatewayTest.header(denied, "Retry-After"));

                for (int i = 0; i < 3; i++) {
                    HttpResponse<String> never = gateway.get("/big/x", "dan");
                    assertEquals(429, never.statusCode());
                    assertNull(GatewayTest.header(never, "Retry-After"), "no wait admits it");
                }
                assertEquals(1, gateway.reachedBackend());
                // The look at /big wrote nothing.
                assertEquals(0L, (long) server.with(c -> c.sync().exists("request_rate_limiter.{big.dan}.rl")));
            }
        }
    }
}
