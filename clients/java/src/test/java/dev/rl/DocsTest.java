package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer.Edition;
import dev.rl.gateway.Gateway;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * docs/clients.md's Java snippets, read from the file at test time: each block
 * marked "run by clients/java: DocsTest ..." is used here as written (only the
 * addresses are pointed at the test's own servers).
 */
class DocsTest {

    static String snippet(String marker) throws IOException {
        return snippet("docs/clients.md", marker);
    }

    static String snippet(String file, String marker) throws IOException {
        Path root = RealServer.requiredDir("rl.root", "the repository root (clients/java/tests/run sets it)");
        String doc = Files.readString(root.resolve(file));
        Matcher m = Pattern.compile("<!-- run by clients/java: DocsTest " + Pattern.quote(marker)
                + "[^>]*-->\\n```[a-z]*\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        assertTrue(m.find(), file + " has a block marked 'DocsTest " + marker + "'");
        return m.group(1);
    }

    @Test
    void the_documented_gateway_config_limits_as_it_says() throws IOException {
        String yaml = snippet("starts a gateway app").replace("http://localhost:8081", "BACKEND");
        try (RealServer server = RealServer.startClocked(Edition.MODULE);
                Gateway gateway = Gateway.start(yaml, List.of("--spring.data.redis.host=127.0.0.1",
                        "--spring.data.redis.port=" + server.port))) {
            assertEquals(20, gateway.admitted("/api/orders", "alice", 25));
            HttpResponse<String> denied = gateway.get("/api/orders", "alice");
            assertEquals(429, denied.statusCode());
            assertEquals("1", denied.headers().firstValue("Retry-After").orElse(null));
            assertEquals("20", denied.headers().firstValue("X-RateLimit-Burst-Capacity").orElse(null));
            server.advance(1000);
            assertEquals(10, gateway.admitted("/api/orders", "alice", 15));
            assertEquals(30, gateway.reachedBackend());
            assertTrue(server.with(c -> c.sync().exists("request_rate_limiter.{api.alice}.rl")) == 1);
            assertEquals(403, gateway.get("/api/orders", null).statusCode());
        }
    }

    @Test
    void the_readmes_switch_is_a_line_of_the_tested_config() throws IOException {
        String line = snippet("README.md", "checks this line").strip();
        assertTrue(snippet("starts a gateway app").lines().map(String::strip).anyMatch(line::equals),
                "docs/clients.md's gateway config has the README's line " + line);
    }

    @Test
    void the_documented_key_resolver_compiles_and_is_the_tests_own() throws Exception {
        Path root = RealServer.requiredDir("rl.root", "the repository root");
        String app = Files.readString(root.resolve("clients/java/src/test/java/dev/rl/gateway/GatewayApp.java"));
        String source = snippet("compiles this class");
        compile("RateLimitKeys", source);
        String bean = source.substring(source.indexOf("@Bean"), source.lastIndexOf('}'));
        assertTrue(squash(app).contains(squash(bean)), "GatewayApp declares docs/clients.md's bean:\n" + bean);
    }

    /**
     * With the documented {@code spring.data.redis.timeout}, a request while the server
     * is stopped answers within about that time, through either limiter, as the docs
     * say an unreachable server answers: let through, {@code X-RateLimit-Remaining: -1}.
     */
    @ParameterizedTest
    @ValueSource(strings = {"rlRateLimiter", "redisRateLimiter"})
    void with_the_documented_timeout_a_stopped_server_delays_a_request_at_most_that(String limiter)
            throws IOException {
        String yaml = snippet("starts a gateway app").replace("http://localhost:8081", "BACKEND")
                .replace("#{@rlRateLimiter}", "#{@" + limiter + "}");
        Matcher timeout = Pattern.compile("\\n\\s+timeout: (\\d+)s\\n").matcher(yaml);
        assertTrue(timeout.find(), "the documented config sets spring.data.redis.timeout in seconds");
        long boundMs = Long.parseLong(timeout.group(1)) * 1000 + 2000;
        RealServer server = RealServer.start(RealServer.Flavor.VALKEY9, Edition.MODULE);
        try (server; Gateway gateway = Gateway.start(yaml, List.of("--spring.data.redis.host=127.0.0.1",
                "--spring.data.redis.port=" + server.port))) {
            HttpResponse<String> up = gateway.get("/api/orders", "alice");
            assertEquals(200, up.statusCode());
            assertEquals("19", up.headers().firstValue("X-RateLimit-Remaining").orElse(null));
            server.close();
            for (int i = 0; i < 3; i++) {
                long start = System.nanoTime();
                HttpResponse<String> r = gateway.get("/api/orders", "alice");
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(200, r.statusCode(), limiter + " lets the request through");
                assertEquals("-1", r.headers().firstValue("X-RateLimit-Remaining").orElse(null));
                assertTrue(ms < boundMs, limiter + ": answered in " + ms + " ms, over " + boundMs);
            }
            assertEquals(4, gateway.reachedBackend());
        }
    }

    @Test
    void the_documented_coordinates_are_the_poms() throws IOException {
        Path root = RealServer.requiredDir("rl.root", "the repository root");
        String pom = squash(Files.readString(root.resolve("clients/java/pom.xml")));
        String dependency = snippet("checks these coordinates");
        for (String element : List.of("groupId", "artifactId", "version")) {
            Matcher m = Pattern.compile("<" + element + ">([^<]+)</" + element + ">").matcher(dependency);
            assertTrue(m.find());
            assertTrue(pom.contains("<" + element + ">" + m.group(1) + "</" + element + ">"),
                    "pom.xml has " + m.group());
        }
    }

    /** The RlCommands example, compiled as written and run against a server with the module. */
    @Test
    void the_documented_rl_commands_example_runs() throws Exception {
        try (RealServer server = RealServer.start(RealServer.Flavor.VALKEY9, Edition.MODULE)) {
            String source = snippet("runs this code").replace("redis://localhost:6379", server.url());
            Path dir = compile("Example", source);
            try (var loader = new java.net.URLClassLoader(new java.net.URL[] {dir.toUri().toURL()},
                    getClass().getClassLoader())) {
                loader.loadClass("Example").getMethod("main", String[].class).invoke(null, (Object) new String[0]);
            }
            String tat = server.with(c -> c.sync().get("user:42"));
            assertTrue(tat != null && tat.matches("[0-9]{16}"), "the snippet's call left its TAT: " + tat);
        }
    }

    /** The example's client URI, as written: a blocking call fails within its timeout while the server is stopped. */
    @Test
    void the_documented_client_uri_bounds_a_call_while_the_server_is_stopped() throws Exception {
        Matcher uri = Pattern.compile("RedisClient\\.create\\(\"(redis://localhost:6379\\?timeout=(\\d+)s)\"\\)")
                .matcher(snippet("runs this code"));
        assertTrue(uri.find(), "the RlCommands example creates its client with a timeout=<n>s URI");
        long boundMs = Long.parseLong(uri.group(2)) * 1000 + 2000;
        RealServer server = RealServer.start(RealServer.Flavor.VALKEY9, Edition.MODULE);
        RedisClient client = RedisClient.create(uri.group(1).replace("redis://localhost:6379", server.url()));
        try (server; StatefulRedisConnection<String, String> connection = client.connect()) {
            RlCommands rl = RlCommands.of(connection);
            assertTrue(rl.throttle("user:42", 19, 5, 1000, 1).allowed());
            server.close();
            long start = System.nanoTime();
            assertThrows(RedisCommandTimeoutException.class, () -> rl.throttle("user:42", 19, 5, 1000, 1));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < boundMs, "failed after " + ms + " ms, over " + boundMs);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** The jar's own README shows the gateway config and the example that run above, as they are here. */
    @Test
    void the_packages_readme_shows_the_tested_config_and_example() throws IOException {
        Path root = RealServer.requiredDir("rl.root", "the repository root");
        String readme = Files.readString(root.resolve("clients/java/README.md"));
        for (String[] block : new String[][] {{"yaml", "starts a gateway app"}, {"java", "runs this code"}}) {
            Matcher m = Pattern.compile("```" + block[0] + "\\n(.*?)```", Pattern.DOTALL).matcher(readme);
            assertTrue(m.find(), "clients/java/README.md has a " + block[0] + " block");
            assertEquals(snippet(block[1]), m.group(1), "clients/java/README.md's " + block[0]
                    + " block is docs/clients.md's");
        }
    }

    /** Compiles a documented class, as written, on the tests' classpath; returns its directory. */
    static Path compile(String name, String source) throws IOException {
        Path dir = Files.createTempDirectory("rl-java-snippet-");
        Path file = dir.resolve(name + ".java");
        Files.writeString(file, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String classpath = System.getProperty("rl.classpath", System.getProperty("java.class.path"));
        int rc = javac.run(null, null, null, "-classpath", classpath, "-d", dir.toString(), file.toString());
        assertEquals(0, rc, "docs/clients.md's " + name + " compiles as written");
        return dir;
    }

    private static String squash(String text) {
        return text.replaceAll("\\s+", " ").trim();
    }
}
