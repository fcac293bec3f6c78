package dev.rl;

import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * rl's commands on Lettuce, one command per call, with typed replies.
 *
 * <p>Works on a standalone and on a Cluster connection (each call names its key, so
 * Lettuce routes it to the key's node), on the module ({@code RL.*}) and on the
 * function library ({@code FCALL rl_*}): which one the server has is found once, on
 * the first call, and kept. Each verb has a blocking form and an {@code ...Async}
 * form; errors from the server (a bad argument, a key rl did not write) arrive as
 * Lettuce's {@code RedisCommandExecutionException} with the server's message.
 */
public final class RlCommands {

    /** Which edition of rl answers: the module's commands or the function library. */
    public enum Edition {
        MODULE, FUNCTIONS
    }

    private static final StringCodec CODEC = StringCodec.UTF8;

    private final BaseRedisAsyncCommands<String, String> redis;
    private final Duration timeout;
    private final AtomicReference<CompletableFuture<Edition>> edition = new AtomicReference<>();

    public RlCommands(BaseRedisAsyncCommands<String, String> redis, Duration timeout) {
        this.redis = redis;
        this.timeout = timeout;
    }

    public static RlCommands of(StatefulRedisConnection<String, String> connection) {
        return new RlCommands(connection.async(), connection.getTimeout());
    }

    public static RlCommands of(StatefulRedisClusterConnection<String, String> connection) {
        return new RlCommands(connection.async(), connection.getTimeout());
    }

    // -- the limiters --------------------------------------------------------

    public Decision slide(String key, long limit, long windowMs, Option... options) {
        return await(slideAsync(key, limit, windowMs, options));
    }

    public CompletionStage<Decision> slideAsync(String key, long limit, long windowMs, Option... options) {
        return decide("SLIDE", key, Clause.slide(limit, windowMs, options));
    }

    public Decision buckets(String key, long limit, long windowMs, Option... options) {
        return await(bucketsAsync(key, limit, windowMs, options));
    }

    public CompletionStage<Decision> bucketsAsync(String key, long limit, long windowMs, Option... options) {
        return decide("BUCKETS", key, Clause.buckets(limit, windowMs, options));
    }

    /** {@code RL.THROTTLE key max_burst count period quantity}: GCRA, a token bucket of {@code max_burst + 1}. */
    public Decision throttle(String key, long maxBurst, long count, long periodMs, long quantity, Option... options) {
        return await(throttleAsync(key, maxBurst, count, periodMs, quantity, options));
    }

    public CompletionStage<Decision> throttleAsync(String key, long maxBurst, long count, long periodMs,
            long quantity, Option... options) {
        return decide("THROTTLE", key, Clause.throttle(maxBurst, count, periodMs, quantity, options));
    }

    public Decision fixed(String key, long limit, long windowMs, Option... options) {
        return await(fixedAsync(key, limit, windowMs, options));
    }

    public CompletionStage<Decision> fixedAsync(String key, long limit, long windowMs, Option... options) {
        return decide("FIXED", key, Clause.fixed(limit, windowMs, options));
    }

    // -- verbs on any limiter -----------------------------------------------

    /** {@code RL.PEEK}: what the clause's command would reply, writing nothing. */
    public Decision peek(String key, Clause clause) {
        return await(peekAsync(key, clause));
    }

    public CompletionStage<Decision> peekAsync(String key, Clause clause) {
        return call("PEEK", clause.limiter(), key, clause.params(), true, multi())
                .thenApply(r -> Decision.parse(r, 0));
    }

    /** {@code RL.REFUND}: gives back the clause's units; {@code granted} is how many were. */
    public Decision refund(String key, Clause clause) {
        return await(refundAsync(key, clause));
    }

    public CompletionStage<Decision> refundAsync(String key, Clause clause) {
        return call("REFUND", clause.limiter(), key, clause.params(), false, multi())
                .thenApply(Decision::parseUnits);
    }

    /**
     * {@code RL.CHARGE limiter key ... COST cost}: records {@code cost} whether or not
     * it fits. The clause carries no units of its own (no {@code COST}, and
     * {@link Clause#throttle(long, long, long)} for THROTTLE).
     */
    public Decision charge(String key, Clause clause, long cost) {
        return await(chargeAsync(key, clause, cost));
    }

    public CompletionStage<Decision> chargeAsync(String key, Clause clause, long cost) {
        List<String> params = new ArrayList<>(clause.params());
        params.add("COST");
        params.add(Long.toString(cost));
        return call("CHARGE", clause.limiter(), key, params, false, multi()).thenApply(Decision::parseUnits);
    }

    /** {@code RL.BLOCK limiter key ms}: the block's end, in ms since the epoch (the server's clock). */
    public long block(String key, Limiter limiter, long ms) {
        return await(blockAsync(key, limiter, ms));
    }

    public CompletionStage<Long> blockAsync(String key, Limiter limiter, long ms) {
        return call("BLOCK", limiter, key, List.of(Long.toString(ms)), false, () -> new IntegerOutput<>(CODEC));
    }

    /** {@code RL.UNBLOCK limiter key}: whether a block was lifted. */
    public boolean unblock(String key, Limiter limiter) {
        return await(unblockAsync(key, limiter));
    }

    public CompletionStage<Boolean> unblockAsync(String key, Limiter limiter) {
        return call("UNBLOCK", limiter, key, List.of(), false, () -> new IntegerOutput<>(CODEC))
                .thenApply(n -> n == 1);
    }

    /** {@code RL.ALL}: clause {@code i} on key {@code i}; admitted only if all admit, atomically. */
    public AllDecision all(List<String> keys, List<Clause> clauses) {
        return await(allAsync(keys, clauses));
    }

    public CompletionStage<AllDecision> allAsync(List<String> keys, List<Clause> clauses) {
        if (keys.size() != clauses.size()) {
            throw new IllegalArgumentException("RL.ALL takes one clause per key: " + keys.size() + " keys, "
                    + clauses.size() + " clauses");
        }
        return edition().thenCompose(e -> {
            CommandArgs<String, String> args = new CommandArgs<>(CODEC);
            if (e == Edition.FUNCTIONS) {
                args.add("rl_all");
            }
            args.add(keys.size());
            keys.forEach(args::addKey);
            for (Clause c : clauses) {
                args.add(c.limiter().name());
                c.params().forEach(args::add);
            }
            ProtocolKeyword command = e == Edition.MODULE ? new Keyword("RL.ALL") : CommandType.FCALL;
            return redis.dispatch(command, new NestedMultiOutput<>(CODEC), args);
        }).thenApply(r -> AllDecision.parse(r, clauses));
    }

    // -- leases ---------------------------------------------------------------

    public Lease acquire(String key, long limit, long leaseMs, Option... options) {
        return await(acquireAsync(key, limit, leaseMs, options));
    }

    public CompletionStage<Lease> acquireAsync(String key, long limit, long leaseMs, Option... options) {
        return call("ACQUIRE", null, key, Clause.acquire(limit, leaseMs, options).params(), false, multi())
                .thenApply(Lease::parse);
    }

    /** {@code RL.RELEASE}: {@code allowed} is "released", {@code remaining} the leases still held. */
    public Decision release(String key, String lease) {
        return await(releaseAsync(key, lease));
    }

    public CompletionStage<Decision> releaseAsync(String key, String lease) {
        return call("RELEASE", null, key, List.of(lease), false, multi()).thenApply(r -> Decision.parse(r, 1));
    }

    /** {@code RL.RENEW}: {@code allowed} is "renewed", {@code remaining} the leases held. */
    public Decision renew(String key, String lease, long leaseMs) {
        return await(renewAsync(key, lease, leaseMs));
    }

    public CompletionStage<Decision> renewAsync(String key, String lease, long leaseMs) {
        return call("RENEW", null, key, List.of(lease, Long.toString(leaseMs)), false, multi())
                .thenApply(r -> Decision.parse(r, 1));
    }

    // -- the edition and the one way a command is sent -------------------------

    /**
     * Which edition the server has, found once: the module when {@code COMMAND INFO}
     * knows {@code RL.THROTTLE}, else the library when {@code FCALL_RO rl_version 0}
     * answers. A failed look-up is forgotten, so the next call asks again.
     */
    public CompletionStage<Edition> edition() {
        CompletableFuture<Edition> known = edition.get();
        if (known != null) {
            return known;
        }
        CompletableFuture<Edition> mine = new CompletableFuture<>();
        if (!edition.compareAndSet(null, mine)) {
            return edition.get();
        }
        CommandArgs<String, String> info = new CommandArgs<>(CODEC).add("INFO").add("RL.THROTTLE");
        redis.dispatch(CommandType.COMMAND, new NestedMultiOutput<>(CODEC), info).thenCompose(r -> {
            if (!r.isEmpty() && r.get(0) instanceof List<?>) {
                return CompletableFuture.completedFuture(Edition.MODULE);
            }
            CommandArgs<String, String> version = new CommandArgs<>(CODEC).add("rl_version").add(0);
            return redis.dispatch(CommandType.FCALL_RO, new NestedMultiOutput<>(CODEC), version)
                    .handle((ok, error) -> {
                        if (error != null) {
                            throw new IllegalStateException("rl: the server has neither the rl module (RL.THROTTLE "
                                    + "is unknown) nor the rl function library (FCALL_RO rl_version 0 failed: "
                                    + error.getMessage() + "); load librl.so with loadmodule, or FUNCTION LOAD "
                                    + "rl.lua", error);
                        }
                        return Edition.FUNCTIONS;
                    });
        }).whenComplete((e, error) -> {
            if (error != null) {
                edition.compareAndSet(mine, null);
                mine.completeExceptionally(error);
            } else {
                mine.complete(e);
            }
        });
        return mine;
    }

    private CompletionStage<Decision> decide(String verb, String key, Clause clause) {
        return call(verb, null, key, clause.params(), false, multi()).thenApply(r -> Decision.parse(r, clause.units()));
    }

    /**
     * {@code RL.<verb> [limiter] key params} on the module, {@code FCALL rl_<verb> 1 key
     * [limiter] params} on the library: the one place the editions differ.
     */
    private <T> CompletionStage<T> call(String verb, Limiter limiter, String key, List<String> params,
            boolean readOnly, Supplier<CommandOutput<String, String, T>> output) {
        return edition().thenCompose(e -> {
            CommandArgs<String, String> args = new CommandArgs<>(CODEC);
            ProtocolKeyword command;
            if (e == Edition.MODULE) {
                command = new Keyword("RL." + verb);
                if (limiter != null) {
                    args.add(limiter.name());
                }
                args.addKey(key);
            } else {
                command = readOnly ? CommandType.FCALL_RO : CommandType.FCALL;
                args.add("rl_" + verb.toLowerCase(java.util.Locale.ROOT)).add(1).addKey(key);
                if (limiter != null) {
                    args.add(limiter.name());
                }
            }
            params.forEach(args::add);
            return redis.dispatch(command, output.get(), args);
        });
    }

    private static Supplier<CommandOutput<String, String, List<Object>>> multi() {
        return () -> new NestedMultiOutput<>(CODEC);
    }

    private <T> T await(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("rl: interrupted", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("rl: no reply within " + timeout, e);
        }
    }

    private record Keyword(String name) implements ProtocolKeyword {
        @Override
        public byte[] getBytes() {
            return name.getBytes(StandardCharsets.US_ASCII);
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
