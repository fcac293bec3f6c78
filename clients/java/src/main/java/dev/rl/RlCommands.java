package dev.rl;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
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
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
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
    // null until a reply shows which edition answers (never COMMAND: see run).
    private volatile Edition edition;

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
        return run(e -> {
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
            return new Line(e == Edition.MODULE ? new Keyword("RL.ALL") : CommandType.FCALL, args);
        }, multi()).thenApply(r -> AllDecision.parse(r, clauses));
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
     * The key {@link #edition()} reads through rl, under {@code rl:} so that a user granted
     * only rl's commands and keys (the README's ACL recipe, {@code +@ratelimit ~rl:*}) may
     * read it. It is never written.
     */
    public static final String PROBE_KEY = "rl:probe";

    /**
     * Which edition the server has, found once: the module when {@code RL.PEEK SLIDE}
     * of {@link #PROBE_KEY} answers, else the library when {@code FCALL_RO rl_version 0}
     * answers. Calls need not ask first: the first call finds it by its own command.
     * A failed look-up is forgotten, so the next call asks again.
     */
    public CompletionStage<Edition> edition() {
        Edition known = edition;
        if (known != null) {
            return CompletableFuture.completedFuture(known);
        }
        CommandArgs<String, String> peek = new CommandArgs<>(CODEC).add("SLIDE").addKey(PROBE_KEY).add(1).add(1000);
        return run(e -> new Line(new Keyword("RL.PEEK"), peek), multi(), true).handle((reply, error) -> {
            // An error of rl's own (rl:probe holding another kind of key) still
            // showed the module.
            Edition found = edition;
            if (found != null) {
                return found;
            }
            throw error instanceof CompletionException c ? c : new CompletionException(error);
        });
    }

    /** A command and its arguments, as one edition spells a call. */
    private record Line(ProtocolKeyword command, CommandArgs<String, String> args) {
    }

    /**
     * Sends the line {@code build} makes for the server's edition. While the edition is
     * unknown it sends the module's: any reply, or an error of rl's own (a bad argument,
     * {@code WRONGTYPE}), shows the module is there; {@code unknown command} shows it is
     * not, and then the library is asked for ({@code FCALL_RO rl_version 0}) and, if
     * loaded, sent the library's line (unless {@code probe}: the question was only which
     * edition, and the reply is null). {@code COMMAND}, which the README's ACL recipe does
     * not grant, is never sent. {@code NOPERM} and connection errors come back as they
     * are, the edition still unknown.
     */
    private <T> CompletionStage<T> run(Function<Edition, Line> build, Supplier<CommandOutput<String, String, T>> output) {
        return run(build, output, false);
    }

    private <T> CompletionStage<T> run(Function<Edition, Line> build, Supplier<CommandOutput<String, String, T>> output,
            boolean probe) {
        Edition known = edition;
        if (known != null) {
            return dispatch(build.apply(known), output);
        }
        return dispatch(build.apply(Edition.MODULE), output).handle((reply, error) -> {
            if (error == null) {
                edition = Edition.MODULE;
                return CompletableFuture.completedFuture(reply);
            }
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            String text = String.valueOf(cause.getMessage());
            if (!(cause instanceof RedisCommandExecutionException) || text.startsWith("NOPERM")) {
                return CompletableFuture.<T>failedFuture(cause);
            }
            if (!text.toLowerCase(Locale.ROOT).contains("unknown command")) {
                edition = Edition.MODULE;
                return CompletableFuture.<T>failedFuture(cause);
            }
            return library().thenCompose(e -> probe ? CompletableFuture.<T>completedFuture(null)
                    : dispatch(build.apply(e), output));
        }).thenCompose(Function.identity());
    }

    /** The library, when the module is not loaded: {@code FCALL_RO rl_version 0} answers. */
    private CompletionStage<Edition> library() {
        CommandArgs<String, String> version = new CommandArgs<>(CODEC).add("rl_version").add(0);
        return redis.dispatch(CommandType.FCALL_RO, new NestedMultiOutput<>(CODEC), version).handle((ok, error) -> {
            if (error != null) {
                throw new IllegalStateException("rl: the server has neither the rl module (RL.* is an unknown "
                        + "command) nor the rl function library (FCALL_RO rl_version 0 failed: "
                        + error.getMessage() + "); load librl.so with loadmodule, or FUNCTION LOAD rl.lua", error);
            }
            edition = Edition.FUNCTIONS;
            return Edition.FUNCTIONS;
        });
    }

    private <T> CompletionStage<T> dispatch(Line line, Supplier<CommandOutput<String, String, T>> output) {
        return redis.dispatch(line.command(), output.get(), line.args());
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
        return run(e -> {
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
                args.add("rl_" + verb.toLowerCase(Locale.ROOT)).add(1).addKey(key);
                if (limiter != null) {
                    args.add(limiter.name());
                }
            }
            params.forEach(args::add);
            return new Line(command, args);
        }, output);
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
            // Lettuce's own blocking calls throw this: an app's handler for them covers rl's.
            throw new RedisCommandTimeoutException("rl: no reply within " + timeout);
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
