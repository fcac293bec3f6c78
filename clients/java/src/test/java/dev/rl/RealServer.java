package dev.rl;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * A real server on a free loopback port, in its own temp dir, with the module
 * loaded or with the function library loaded into a bare server; optionally under
 * libfaketime with a stopped clock (Valkey only: Debian's Redis 7.0 crashes under
 * it). Paths come from tests/run as system properties; a missing one fails with a
 * message saying how to get it.
 */
public final class RealServer implements AutoCloseable {

    public enum Flavor {
        REDIS7("rl.redis7", "redis-server (Redis 7.0) on PATH, or RL_REDIS7"),
        VALKEY9("rl.valkey9", ".deps/valkey/valkey-server (make deps), or RL_VALKEY9");

        final String property;
        final String hint;

        Flavor(String property, String hint) {
            this.property = property;
            this.hint = hint;
        }

        Path binary() {
            return requiredFile(property, hint);
        }
    }

    public enum Edition {
        MODULE, FUNCTIONS
    }

    private static final DateTimeFormatter FAKETIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss")
            .withZone(ZoneOffset.UTC);

    public final Flavor flavor;
    public final Edition edition;
    public final int port;
    final Path dir;
    private final Process process;
    private final Path clockFile;
    private long clockMs;

    private RealServer(Flavor flavor, Edition edition, int port, Path dir, Process process, Path clockFile) {
        this.flavor = flavor;
        this.edition = edition;
        this.port = port;
        this.dir = dir;
        this.process = process;
        this.clockFile = clockFile;
    }

    public static RealServer start(Flavor flavor, Edition edition) {
        return start(flavor, edition, List.of(), false);
    }

    /** A Valkey whose clock stands still at a whole second, and moves only by {@link #advance}. */
    public static RealServer startClocked(Edition edition) {
        return start(Flavor.VALKEY9, edition, List.of(), true);
    }

    static RealServer start(Flavor flavor, Edition edition, List<String> extra, boolean clocked) {
        return start(flavor, edition, extra, clocked, 0);
    }

    /**
     * Stops this server and starts another of its flavor on the same port, with
     * {@code edition} ({@code null}: neither the module nor the library): the server
     * changes under the clients connected to that address.
     */
    public RealServer restartAs(Edition edition) {
        close();
        return start(flavor, edition, List.of(), false, port);
    }

    private static RealServer start(Flavor flavor, Edition edition, List<String> extra, boolean clocked,
            int fixedPort) {
        Path binary = flavor.binary();
        Path module = edition == Edition.MODULE ? requiredFile("rl.module",
                "target/release/librl.so (make build), or RL_MODULE") : null;
        String lastLog = "";
        for (int attempt = 0; attempt < 5; attempt++) {
            int port = fixedPort != 0 ? fixedPort : freePort();
            try {
                Path dir = Files.createTempDirectory("rl-java-" + flavor.name().toLowerCase() + "-");
                List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--port", Integer.toString(port),
                        "--bind", "127.0.0.1", "--dir", dir.toString(), "--save", "", "--appendonly", "no",
                        "--daemonize", "no", "--logfile", dir.resolve("server.log").toString()));
                if (module != null) {
                    cmd.add("--loadmodule");
                    cmd.add(module.toString());
                }
                cmd.addAll(extra);
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(dir.resolve("stdout.log").toFile());
                Path clock = null;
                long clockMs = 0;
                if (clocked) {
                    clock = dir.resolve("faketime");
                    // A whole second: upstream's script reads whole seconds, so a
                    // test that steps whole seconds sees both buckets refill alike.
                    clockMs = (System.currentTimeMillis() / 1000) * 1000;
                    writeClock(clock, clockMs);
                    pb.environment().put("TZ", "UTC");
                    pb.environment().put("LD_PRELOAD",
                            requiredFile("rl.faketime", "libfaketime (make deps: apt-get install faketime)")
                                    .toString());
                    pb.environment().put("FAKETIME_TIMESTAMP_FILE", clock.toString());
                    pb.environment().put("FAKETIME_NO_CACHE", "1");
                }
                Process p = pb.start();
                RealServer server = new RealServer(flavor, edition, port, dir, p, clock);
                server.clockMs = clockMs;
                if (server.waitReady(Duration.ofSeconds(20))) {
                    if (edition == Edition.FUNCTIONS) {
                        server.loadLibrary();
                    }
                    return server;
                }
                lastLog = Files.exists(dir.resolve("server.log")) ? Files.readString(dir.resolve("server.log")) : "";
                server.close();
                if (fixedPort != 0) {
                    Thread.sleep(200);
                }
            } catch (IOException e) {
                throw new IllegalStateException("start " + binary + ": " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException(flavor + " did not start on a free port; its log:\n" + lastLog);
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** A short-lived connection for the test's own look at the server. */
    public <T> T with(java.util.function.Function<StatefulRedisConnection<String, String>, T> body) {
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            return body.apply(c);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    public void loadLibrary() {
        String code = readLibrary();
        with(c -> c.sync().functionLoad(code, true));
    }

    static String readLibrary() {
        try {
            return Files.readString(requiredFile("rl.library", "functions/rl.lua in the repository, or RL_LIBRARY"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Moves the stopped clock by {@code ms}. */
    public void advance(long ms) {
        if (clockFile == null) {
            throw new IllegalStateException("advance: this server's clock is the real one");
        }
        clockMs += ms;
        writeClock(clockFile, clockMs);
    }

    private static void writeClock(Path file, long ms) {
        // Half a µs past the ms: libfaketime reads the fraction as a double.
        String text = FAKETIME.format(Instant.ofEpochMilli(ms)) + String.format(".%03d000500%n", ms % 1000);
        try {
            Path part = file.resolveSibling("faketime.part");
            Files.writeString(part, text);
            Files.move(part, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException("write the clock file: " + e, e);
        }
    }

    private boolean waitReady(Duration limit) {
        long end = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < end) {
            if (!process.isAlive()) {
                return false;
            }
            try {
                String pong = with(c -> c.sync().ping());
                if ("PONG".equals(pong)) {
                    return true;
                }
            } catch (RuntimeException notYet) {
                // Not listening yet.
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Path requiredFile(String property, String hint) {
        String value = System.getProperty(property);
        if (value == null || value.isEmpty()) {
            throw new IllegalStateException("system property " + property + " is not set: run clients/java/tests/run ("
                    + hint + ")");
        }
        Path path = Path.of(value);
        if (!Files.isRegularFile(path)) {
            throw new IllegalStateException(property + ": " + path + " not found: " + hint);
        }
        return path;
    }

    public static Path requiredDir(String property, String hint) {
        String value = System.getProperty(property);
        if (value == null || value.isEmpty() || !Files.isDirectory(Path.of(value))) {
            throw new IllegalStateException("system property " + property + " is not a directory (" + value + "): "
                    + hint);
        }
        return Path.of(value);
    }

    @Override
    public String toString() {
        return flavor + " " + edition;
    }
}
