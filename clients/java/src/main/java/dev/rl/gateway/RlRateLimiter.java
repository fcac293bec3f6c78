package dev.rl.gateway;

import dev.rl.Decision;
import dev.rl.RlCommands;
import dev.rl.RlNotLoadedException;
import io.lettuce.core.RedisCommandExecutionException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A Spring Cloud Gateway {@code RateLimiter} on rl: one {@code RL.THROTTLE} per
 * request (or {@code FCALL rl_throttle} on the function library), on one key.
 *
 * <p>It is configured exactly as {@link RedisRateLimiter}: the route's
 * {@code redis-rate-limiter.replenishRate}, {@code .burstCapacity} and
 * {@code .requestedTokens} (its {@link RedisRateLimiter.Config}, with its defaults),
 * and the header names and {@code include-headers} under
 * {@code spring.cloud.gateway.server.webflux.redis-rate-limiter}. So a route switches
 * by naming this bean: {@code rate-limiter: "#{@rlRateLimiter}"}.
 *
 * <p>The bucket is {@code RL.THROTTLE key burstCapacity-1 replenishRate 1000
 * requestedTokens}: a bucket of {@code burstCapacity} tokens refilled at
 * {@code replenishRate} a second, continuously rather than once a second as
 * upstream's script does. A denial adds {@code Retry-After} (whole seconds, rounded
 * up). Like upstream, a server that cannot be reached lets the request through
 * (remaining {@code -1}), and so does a server without rl (neither the module nor the
 * function library: {@link RlCommands} logs once what to load, not per request);
 * unlike upstream, an error the server answers (a configuration rl refuses) fails
 * the request, with the server's message.
 */
public class RlRateLimiter extends AbstractRateLimiter<RedisRateLimiter.Config> {

    /** The route arguments' prefix: upstream's, so a route's arguments stay as they are. */
    public static final String CONFIGURATION_PROPERTY_NAME = RedisRateLimiter.CONFIGURATION_PROPERTY_NAME;

    public static final String RETRY_AFTER_HEADER = "Retry-After";

    private static final Log log = LogFactory.getLog(RlRateLimiter.class);

    private final Supplier<RlCommands> rl;
    private RedisRateLimiter.Config defaultConfig;
    private boolean includeHeaders = true;
    private String remainingHeader = RedisRateLimiter.REMAINING_HEADER;
    private String replenishRateHeader = RedisRateLimiter.REPLENISH_RATE_HEADER;
    private String burstCapacityHeader = RedisRateLimiter.BURST_CAPACITY_HEADER;
    private String requestedTokensHeader = RedisRateLimiter.REQUESTED_TOKENS_HEADER;

    /** @param rl supplies the client on first use (the connection is opened lazily) */
    public RlRateLimiter(Supplier<RlCommands> rl, ConfigurationService configurationService) {
        super(RedisRateLimiter.Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
        // At start, never at a request: a gateway line this jar cannot read stops the app here.
        GatewayLines.check();
        this.rl = rl;
    }

    /** For routes built in Java with no arguments: upstream's {@code new RedisRateLimiter(rate, burst, tokens)}. */
    public RlRateLimiter(Supplier<RlCommands> rl, int replenishRate, long burstCapacity, int requestedTokens) {
        this(rl, (ConfigurationService) null);
        this.defaultConfig = GatewayLines.withBurstCapacity(
                new RedisRateLimiter.Config().setReplenishRate(replenishRate).setRequestedTokens(requestedTokens),
                burstCapacity);
    }

    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        RedisRateLimiter.Config config = loadConfiguration(routeId);
        int rate = config.getReplenishRate();
        long capacity = GatewayLines.burstCapacity(config);
        int requested = config.getRequestedTokens();
        if (rate < 1 || capacity < 1 || requested < 1) {
            return Mono.error(new IllegalArgumentException("route " + routeId + ": " + CONFIGURATION_PROPERTY_NAME
                    + ".replenishRate, .burstCapacity and .requestedTokens must be at least 1 (are " + rate + ", "
                    + capacity + ", " + requested + ")"));
        }
        // More than the bucket holds is never admitted, as upstream never admits it;
        // rl refuses such a request outright, so ask with quantity 0 (a look) for the
        // tokens left and deny.
        boolean never = requested > capacity;
        String key = "request_rate_limiter.{" + routeId + "." + id + "}.rl";
        return Mono.defer(() -> Mono.fromCompletionStage(
                rl.get().throttleAsync(key, capacity - 1, rate, 1000, never ? 0 : requested)))
                // Off Lettuce's event loop before the gateway goes on: the response is
                // then written as it is after upstream's limiter, not from the thread
                // that reads every rl reply.
                .publishOn(Schedulers.parallel())
                .map(d -> response(config, never ? deny(d) : d))
                // rl not loaded: upstream's answer to a server it cannot use, the request
                // let through; RlCommands logged what to load, once.
                .onErrorResume(RlRateLimiter::notLoaded, e -> Mono.just(new Response(true, headers(config, -1L))))
                .onErrorResume(e -> !(e instanceof RedisCommandExecutionException), e -> {
                    log.error("rl: could not reach the server; letting the request through", e);
                    return Mono.just(new Response(true, headers(config, -1L)));
                });
    }

    private static boolean notLoaded(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof RlNotLoadedException) {
                return true;
            }
        }
        return false;
    }

    private static Decision deny(Decision looked) {
        return new Decision(false, looked.remaining(), 0, looked.resetAfterMs(), 0);
    }

    private Response response(RedisRateLimiter.Config config, Decision d) {
        Map<String, String> headers = headers(config, d.remaining());
        if (!d.allowed() && d.retryAfterMs() > 0) {
            headers.put(RETRY_AFTER_HEADER, Long.toString((d.retryAfterMs() + 999) / 1000));
        }
        return new Response(d.allowed(), headers);
    }

    /** Upstream's four headers, when {@code include-headers} (the default). */
    public Map<String, String> headers(RedisRateLimiter.Config config, Long remaining) {
        Map<String, String> headers = new HashMap<>();
        if (includeHeaders) {
            headers.put(remainingHeader, remaining.toString());
            headers.put(replenishRateHeader, String.valueOf(config.getReplenishRate()));
            headers.put(burstCapacityHeader, String.valueOf(GatewayLines.burstCapacity(config)));
            headers.put(requestedTokensHeader, String.valueOf(config.getRequestedTokens()));
        }
        return headers;
    }

    RedisRateLimiter.Config loadConfiguration(String routeId) {
        RedisRateLimiter.Config config = getConfig().getOrDefault(routeId, defaultConfig);
        if (config == null) {
            config = getConfig().get("defaultFilters");
        }
        if (config == null) {
            throw new IllegalArgumentException("No Configuration found for route " + routeId + " or defaultFilters");
        }
        return config;
    }

    public boolean isIncludeHeaders() {
        return includeHeaders;
    }

    public void setIncludeHeaders(boolean includeHeaders) {
        this.includeHeaders = includeHeaders;
    }

    public String getRemainingHeader() {
        return remainingHeader;
    }

    public void setRemainingHeader(String remainingHeader) {
        this.remainingHeader = remainingHeader;
    }

    public String getReplenishRateHeader() {
        return replenishRateHeader;
    }

    public void setReplenishRateHeader(String replenishRateHeader) {
        this.replenishRateHeader = replenishRateHeader;
    }

    public String getBurstCapacityHeader() {
        return burstCapacityHeader;
    }

    public void setBurstCapacityHeader(String burstCapacityHeader) {
        this.burstCapacityHeader = burstCapacityHeader;
    }

    public String getRequestedTokensHeader() {
        return requestedTokensHeader;
    }

    public void setRequestedTokensHeader(String requestedTokensHeader) {
        this.requestedTokensHeader = requestedTokensHeader;
    }
}
