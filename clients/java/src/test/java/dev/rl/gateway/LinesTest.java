package dev.rl.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;

/**
 * The Spring line on the test classpath is the one the Maven profile names (so the
 * gateway tests ran on it), and a limiter built in Java carries its arguments on it.
 * The classes under test are the default build's, compiled against gateway 5.0
 * (tests/run checks that the spring-boot-3 run leaves them as they were).
 */
class LinesTest {

    @Test
    void the_classpath_holds_the_profiles_line() throws Exception {
        String line = System.getProperty("rl.line");
        String gateway = RedisRateLimiter.class.getPackage().getImplementationVersion();
        Class<?> burst = RedisRateLimiter.Config.class.getMethod("getBurstCapacity").getReturnType();
        String expected = switch (String.valueOf(line)) {
            case "spring-boot-4" -> "4.0. 5.0. long";
            case "spring-boot-3" -> "3.5. 4.3. int";
            default -> throw new IllegalStateException("rl.line is " + line + ": run clients/java/tests/run");
        };
        String[] e = expected.split(" ");
        assertTrue(SpringBootVersion.getVersion().startsWith(e[0]), "Spring Boot " + SpringBootVersion.getVersion());
        assertTrue(gateway != null && gateway.startsWith(e[1]), "Spring Cloud Gateway " + gateway);
        assertEquals(e[2], burst.getName(), "RedisRateLimiter.Config's burstCapacity");
    }

    @Test
    void a_limiter_built_in_java_reads_its_own_arguments() {
        RlRateLimiter limiter = new RlRateLimiter(() -> null, 2, 5, 1);
        var headers = limiter.headers(limiter.loadConfiguration("any"), 3L);
        assertEquals("2", headers.get(RedisRateLimiter.REPLENISH_RATE_HEADER));
        assertEquals("5", headers.get(RedisRateLimiter.BURST_CAPACITY_HEADER));
        assertEquals("1", headers.get(RedisRateLimiter.REQUESTED_TOKENS_HEADER));
        assertEquals("3", headers.get(RedisRateLimiter.REMAINING_HEADER));
        long big = 3_000_000_000L;
        if (int.class == burstType()) {
            // An int cannot hold it: refused where the limiter is built, not wrapped.
            var e = assertThrows(IllegalArgumentException.class, () -> new RlRateLimiter(() -> null, 2, big, 1));
            assertTrue(e.getMessage().startsWith("burstCapacity 3000000000 "), e.getMessage());
        } else {
            RlRateLimiter wide = new RlRateLimiter(() -> null, 2, big, 1);
            assertEquals(Long.toString(big),
                    wide.headers(wide.loadConfiguration("any"), 0L).get(RedisRateLimiter.BURST_CAPACITY_HEADER));
        }
    }

    private static Class<?> burstType() {
        try {
            return RedisRateLimiter.Config.class.getMethod("getBurstCapacity").getReturnType();
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }
}
