package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer.Edition;
import dev.rl.gateway.Gateway;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

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
    void the_documented_key_resolver_is_the_tests_own() throws IOException {
        Path root = RealServer.requiredDir("rl.root", "the repository root");
        String app = Files.readString(root.resolve("clients/java/src/test/java/dev/rl/gateway/GatewayApp.java"));
        String bean = snippet("checks the tests' gateway app");
        assertTrue(squash(app).contains(squash(bean)), "GatewayApp declares docs/clients.md's bean:\n" + bean);
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

    /** The RlCommands example, compiled and run against a server with the module. */
    @Test
    void the_documented_rl_commands_example_runs() throws Exception {
        try (RealServer server = RealServer.start(RealServer.Flavor.VALKEY9, Edition.MODULE)) {
            String body = snippet("runs this code").replace("redis://localhost:6379", server.url());
            Path dir = Files.createTempDirectory("rl-java-snippet-");
            Path source = dir.resolve("Snippet.java");
            Files.writeString(source, """
                    import dev.rl.*;
                    import io.lettuce.core.RedisClient;
                    import io.lettuce.core.api.StatefulRedisConnection;
                    public class Snippet {
                        public static void run() {
                    """ + body + """
                            client.shutdown();
                        }
                    }
                    """);
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            String classpath = System.getProperty("rl.classpath", System.getProperty("java.class.path"));
            int rc = javac.run(null, null, null, "-classpath", classpath, "-d", dir.toString(), source.toString());
            assertEquals(0, rc, "the snippet compiles");
            try (var loader = new java.net.URLClassLoader(new java.net.URL[] {dir.toUri().toURL()},
                    getClass().getClassLoader())) {
                loader.loadClass("Snippet").getMethod("run").invoke(null);
            }
            String tat = server.with(c -> c.sync().get("user:42"));
            assertTrue(tat != null && tat.matches("[0-9]{16}"), "the snippet's call left its TAT: " + tat);
        }
    }

    private static String squash(String text) {
        return text.replaceAll("\\s+", " ").trim();
    }
}
