package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer.Edition;
import dev.rl.RealServer.Flavor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * A server that changes under a running client: restarted on the same port with the
 * other edition, or with neither and then one again. The first answer that the edition
 * is gone makes RlCommands find it again, once, and send the call again; with neither,
 * each call fails with {@link RlNotLoadedException}, logged once, not per call. Bursts of
 * calls that need the edition share one probe.
 */
public class SwapTest {

    /** What to load and how, as a release user and a checkout user have it. */
    public static final Pattern HOW_TO = Pattern.compile("loadmodule .*redis-cli -x FUNCTION LOAD REPLACE < rl-"
            + Pattern.quote(RlCommands.VERSION) + "\\.lua .*functions/rl\\.lua or make load-functions", Pattern.DOTALL);

    /** The "rl is not loaded" lines RlCommands logs (System.Logger, here java.util.logging). */
    public static final class NotLoadedLog extends Handler implements AutoCloseable {
        // Held: java.util.logging keeps loggers weakly.
        private final Logger logger = Logger.getLogger(RlCommands.class.getName());
        public final List<String> lines = new CopyOnWriteArrayList<>();

        public NotLoadedLog() {
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord r) {
            if (r.getMessage() != null && r.getMessage().contains("rl is not loaded")) {
                lines.add(r.getMessage());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    /** The three sequences, as the names of RealServer's editions ("NEITHER": neither). */
    @ParameterizedTest
    @ValueSource(strings = {"MODULE FUNCTIONS MODULE", "MODULE NEITHER FUNCTIONS", "FUNCTIONS NEITHER MODULE"})
    void a_running_client_follows_its_server(String sequence) {
        String[] steps = sequence.split(" ");
        RealServer server = RealServer.start(Flavor.VALKEY9, edition(steps[0]));
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", server.port));
        try (NotLoadedLog log = new NotLoadedLog(); StatefulRedisConnection<String, String> c = client.connect()) {
            RlCommands rl = RlCommands.of(c);
            for (int step = 0; step < steps.length; step++) {
                if (step > 0) {
                    server = server.restartAs(edition(steps[step]));
                }
                log.lines.clear();
                if (steps[step].equals("NEITHER")) {
                    for (int i = 0; i < 3; i++) {
                        RlNotLoadedException e = assertThrows(RlNotLoadedException.class,
                                () -> rl.slide("rl:k", 3, 60_000));
                        assertTrue(HOW_TO.matcher(e.getMessage()).find(), e.getMessage());
                    }
                    assertEquals(1, log.lines.size(), "logged once, not per call: " + log.lines);
                    assertTrue(HOW_TO.matcher(log.lines.get(0)).find(), log.lines.get(0));
                    continue;
                }
                // A fresh server: a fresh limit, kept by rl in the edition it has now.
                for (int i = 1; i <= 4; i++) {
                    assertEquals(i <= 3, rl.slide("rl:k", 3, 60_000).allowed(), steps[step] + " call " + i);
                }
                assertEquals(RlCommands.Edition.valueOf(steps[step]), rl.edition().toCompletableFuture().join());
                assertEquals(List.of(), log.lines);
            }
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            server.close();
        }
    }

    @Test
    void bursts_share_one_probe() {
        RealServer server = RealServer.start(Flavor.VALKEY9, Edition.FUNCTIONS);
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", server.port));
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            RlCommands rl = RlCommands.of(c);
            burst(rl, 20);
            Map<String, Long> calls = calls(server);
            assertEquals(1L, calls.get("fcall_ro"), "first calls: " + calls);
            assertEquals(20L, calls.get("fcall"), "first calls: " + calls);

            server = server.restartAs(Edition.MODULE);
            burst(rl, 20);
            calls = calls(server);
            // The leading call's own RL.SLIDE found the module: no probe at all.
            assertEquals(20L, calls.get("rl.slide"), "library -> module: " + calls);
            assertEquals(null, calls.get("fcall_ro"), "library -> module: " + calls);

            server = server.restartAs(Edition.FUNCTIONS);
            burst(rl, 20);
            calls = calls(server);
            assertEquals(1L, calls.get("fcall_ro"), "module -> library: " + calls);
            assertEquals(20L, calls.get("fcall"), "module -> library: " + calls);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            server.close();
        }
    }

    public static RealServer.Edition edition(String name) {
        return name.equals("NEITHER") ? null : Edition.valueOf(name);
    }

    /** n calls at once, each on its own key, all admitted. */
    static void burst(RlCommands rl, int n) {
        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(rl.slideAsync("rl:u" + i, 100, 60_000).toCompletableFuture());
        }
        for (CompletableFuture<Decision> call : calls) {
            assertTrue(call.join().allowed());
        }
    }

    /** How many times the server ran each command (INFO commandstats). */
    public static Map<String, Long> calls(RealServer server) {
        String info = server.with(c -> c.sync().info("commandstats"));
        Map<String, Long> out = new HashMap<>();
        Matcher m = Pattern.compile("(?m)^cmdstat_([^:]+):calls=(\\d+)").matcher(info);
        while (m.find()) {
            out.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return out;
    }
}
