package dev.rl.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real gateway app on a free port in front of a tiny local backend, over HTTP.
 * The backend counts what reaches it, so a test sees what the gateway let through
 * from both ends.
 */
public final class Gateway implements AutoCloseable {

    public final HttpServer backend;
    public final ConfigurableApplicationContext app;
    public final int port;
    private final AtomicInteger served;
    private final HttpClient http = HttpClient.newHttpClient();

    private Gateway(HttpServer backend, ConfigurableApplicationContext app, AtomicInteger served) {
        this.backend = backend;
        this.app = app;
        this.served = served;
        this.port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
    }

    public static HttpServer backend(AtomicInteger served) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", exchange -> {
                served.incrementAndGet();
                byte[] body = "ok".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Starts the app with these command-line arguments (which outrank any config
     * file), plus a random port; {@code BACKEND} in an argument is the backend's URL.
     */
    public static Gateway start(List<String> args) {
        return start(null, args);
    }

    /** {@link #start(List)} with this YAML as a config file ({@code BACKEND} replaced too). */
    public static Gateway start(String yaml, List<String> args) {
        AtomicInteger served = new AtomicInteger();
        HttpServer backend = backend(served);
        String url = "http://127.0.0.1:" + backend.getAddress().getPort();
        List<String> all = new ArrayList<>();
        if (yaml != null) {
            try {
                java.nio.file.Path file = java.nio.file.Files.createTempFile("rl-gateway-", ".yml");
                java.nio.file.Files.writeString(file, yaml.replace("BACKEND", url));
                all.add("--spring.config.additional-location=file:" + file);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        all.add("--server.port=0");
        all.add("--server.address=127.0.0.1");
        all.add("--spring.main.banner-mode=off");
        // On Boot 3.5 a graceful shutdown waits its 30 s for the test client's idle
        // keep-alive connections; the tests close the app when they are done with it.
        all.add("--server.shutdown=immediate");
        args.forEach(a -> all.add(a.replace("BACKEND", url)));
        try {
            ConfigurableApplicationContext app = new SpringApplicationBuilder(GatewayApp.class)
                    .run(all.toArray(String[]::new));
            return new Gateway(backend, app, served);
        } catch (RuntimeException e) {
            backend.stop(0);
            throw e;
        }
    }

    /** Requests that reached the backend. */
    public int reachedBackend() {
        return served.get();
    }

    /** One route's arguments as command-line properties: route {@code index} of the gateway. */
    public static List<String> route(int index, String id, String path, String rateLimiterBean, int replenishRate,
            long burstCapacity, int requestedTokens) {
        String p = "--spring.cloud.gateway.server.webflux.routes[" + index + "].";
        return List.of(p + "id=" + id, p + "uri=BACKEND", p + "predicates[0]=Path=" + path,
                p + "filters[0].name=RequestRateLimiter",
                p + "filters[0].args[rate-limiter]=#{@" + rateLimiterBean + "}",
                p + "filters[0].args[key-resolver]=#{@userKeyResolver}",
                p + "filters[0].args[redis-rate-limiter.replenishRate]=" + replenishRate,
                p + "filters[0].args[redis-rate-limiter.burstCapacity]=" + burstCapacity,
                p + "filters[0].args[redis-rate-limiter.requestedTokens]=" + requestedTokens);
    }

    public HttpResponse<String> get(String path, String user) {
        // A bound on each request: a gateway that stops answering fails the test, not make test.
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(java.time.Duration.ofSeconds(20));
        if (user != null) {
            request.header("X-User", user);
        }
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("GET " + path + " as " + user + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** How many of {@code n} requests the gateway admitted (200 from the backend). */
    public int admitted(String path, String user, int n) {
        int ok = 0;
        for (int i = 0; i < n; i++) {
            int status = get(path, user).statusCode();
            if (status == 200) {
                ok++;
            } else if (status != 429) {
                throw new IllegalStateException(path + ": status " + status);
            }
        }
        return ok;
    }

    @Override
    public void close() {
        app.close();
        backend.stop(0);
    }
}
