package dev.rl.gateway;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;

/**
 * What differs between the Spring Cloud Gateway lines this jar runs on, found once
 * when the class loads: {@link RedisRateLimiter.Config}'s {@code burstCapacity} is an
 * {@code int} in gateway 4.3 (Spring Cloud 2025.0, Spring Boot 3.5) and a
 * {@code long} from 5.0 (Spring Cloud 2025.1, Spring Boot 4.0). A call compiled
 * against either names the return type, so one compiled against 5.0 throws
 * {@code NoSuchMethodError} on 4.3 at every request. Through handles bound to the
 * type found here, both lines read and write it; a gateway with neither shape is
 * refused when the limiter is created, never at request time.
 */
final class GatewayLines {

    static final String SUPPORTED = "Spring Cloud Gateway 4.3 (Spring Cloud 2025.0, Spring Boot 3.5) "
            + "and 5.0 (Spring Cloud 2025.1, Spring Boot 4.0)";

    private static final MethodHandle GET_BURST_CAPACITY;
    private static final MethodHandle SET_BURST_CAPACITY;
    /** Why this gateway cannot be served, or null. */
    private static final String UNSUPPORTED;

    static {
        MethodHandle get = null;
        MethodHandle set = null;
        String unsupported = null;
        Class<RedisRateLimiter.Config> config = RedisRateLimiter.Config.class;
        try {
            Class<?> type = config.getMethod("getBurstCapacity").getReturnType();
            if (type != int.class && type != long.class) {
                throw new NoSuchMethodException("getBurstCapacity() returns " + type);
            }
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            // int widens to long; long narrows to int only through toIntExact,
            // so a capacity an int cannot hold is an error, not a wrapped value.
            get = lookup.findVirtual(config, "getBurstCapacity", MethodType.methodType(type))
                    .asType(MethodType.methodType(long.class, config));
            set = lookup.findVirtual(config, "setBurstCapacity", MethodType.methodType(config, type));
            if (type == int.class) {
                MethodHandle toInt = lookup.findStatic(Math.class, "toIntExact",
                        MethodType.methodType(int.class, long.class));
                set = MethodHandles.filterArguments(set, 1, toInt);
            }
        } catch (ReflectiveOperationException e) {
            unsupported = "RedisRateLimiter.Config has no int or long burstCapacity (" + e.getMessage() + ")";
        }
        GET_BURST_CAPACITY = get;
        SET_BURST_CAPACITY = set;
        UNSUPPORTED = unsupported;
    }

    private GatewayLines() {
    }

    /** Throws, naming the supported lines, when this gateway is neither. */
    static void check() {
        if (UNSUPPORTED != null) {
            Package p = RedisRateLimiter.class.getPackage();
            String found = p.getImplementationVersion() == null ? "" : " (found " + p.getImplementationVersion() + ")";
            throw new IllegalStateException("rlRateLimiter supports " + SUPPORTED + found + ": " + UNSUPPORTED);
        }
    }

    static long burstCapacity(RedisRateLimiter.Config config) {
        try {
            return (long) GET_BURST_CAPACITY.invokeExact(config);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    static RedisRateLimiter.Config withBurstCapacity(RedisRateLimiter.Config config, long burstCapacity) {
        try {
            return (RedisRateLimiter.Config) SET_BURST_CAPACITY.invokeExact(config, burstCapacity);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("burstCapacity " + burstCapacity
                    + " does not fit this gateway's RedisRateLimiter.Config (an int before gateway 5.0)", e);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
