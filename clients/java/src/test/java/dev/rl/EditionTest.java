package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.RealServer.Edition;
import dev.rl.RealServer.Flavor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * How RlCommands finds the edition: by the first call's own command, never by
 * {@code COMMAND}, so that a user made by the README's ACL recipe, as written, can
 * use it; and on a server with only the library, by that command's "unknown command".
 */
public class EditionTest {

    /** The README's {@code ACL SETUSER ...} line, as written. */
    public static List<String> readmeRecipe() throws Exception {
        String readme = Files.readString(RealServer.requiredDir("rl.root", "the repository root").resolve("README.md"));
        Matcher m = Pattern.compile("`(ACL SETUSER [^`]+)`").matcher(readme);
        assertTrue(m.find(), "README.md has no `ACL SETUSER ...` recipe");
        return List.of(m.group(1).split("\\s+"));
    }

    /** The password an {@code ACL SETUSER} line sets ({@code >secret}). */
    public static String password(List<String> acl) {
        return acl.stream().filter(a -> a.startsWith(">")).findFirst().orElseThrow().substring(1);
    }

    /** Sends an {@code ACL ...} line, as written, as the default user. */
    public static void acl(RealServer server, List<String> line) {
        server.with(c -> c.sync().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8),
                new CommandArgs<>(StringCodec.UTF8).addValues(line.subList(1, line.size()))));
    }

    @Test
    void the_readme_acl_recipe_is_enough() throws Exception {
        List<String> recipe = readmeRecipe();
        String user = recipe.get(2);
        String password = password(recipe);
        // Valkey 9.1 has module ACL categories (@ratelimit); Redis 7.0 has none.
        try (RealServer server = RealServer.start(Flavor.VALKEY9, Edition.MODULE)) {
            acl(server, recipe);
            RedisClient client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(server.port)
                    .withAuthentication(user, password).build());
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                RedisCommandExecutionException refused = assertThrows(RedisCommandExecutionException.class,
                        () -> c.sync().command());
                assertTrue(refused.getMessage().startsWith("NOPERM"), refused.getMessage());

                RlCommands rl = RlCommands.of(c);
                assertTrue(rl.slide("rl:java:acl", 1, 60_000).allowed());
                assertFalse(rl.slide("rl:java:acl", 1, 60_000).allowed());
                assertEquals(RlCommands.Edition.MODULE, rl.edition().toCompletableFuture().join());
                // A fresh client's edition() reads PROBE_KEY, which the recipe grants.
                assertEquals(RlCommands.Edition.MODULE, RlCommands.of(c).edition().toCompletableFuture().join());
                // A key outside rl: is the user's own error, and decides nothing.
                RlCommands fresh = RlCommands.of(c);
                RedisCommandExecutionException outside = assertThrows(RedisCommandExecutionException.class,
                        () -> fresh.slide("other:java:acl", 1, 60_000));
                assertTrue(outside.getMessage().startsWith("NOPERM"), outside.getMessage());
                assertTrue(fresh.slide("rl:java:acl2", 1, 60_000).allowed());
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            List<String> keys = server.with(c -> c.sync().keys("*"));
            assertEquals(List.of("rl:java:acl", "rl:java:acl2"), keys.stream().sorted().toList(),
                    "the probe key is never written");
        }
    }

    @Test
    void the_first_call_on_the_library_finds_it_by_its_unknown_command() {
        try (RealServer server = RealServer.start(Flavor.VALKEY9, Edition.FUNCTIONS)) {
            RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", server.port));
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                RlCommands rl = RlCommands.of(c);
                assertTrue(rl.slide("first", 1, 60_000).allowed());
                assertFalse(rl.slide("first", 1, 60_000).allowed());
                assertEquals(RlCommands.Edition.FUNCTIONS, rl.edition().toCompletableFuture().join());
                AllDecision all = RlCommands.of(c).all(List.of("first"), List.of(Clause.slide(1, 60_000)));
                assertFalse(all.allowed());
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }
}
