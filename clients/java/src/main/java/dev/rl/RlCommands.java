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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * rl's commands on Lettuce, one command per call, with typed replies.
 *
 * <p>Works on a standalone and on a Cluster connection (each call names its key, so
 * Lettuce routes it to the key's node), on the module ({@code RL.*}) and on the
 * function library ({@code FCALL rl_*}): which one the server has is found on the
 * first call and kept, and found again when the server answers that it is gone (a
 * server restarted with the other edition under a running app). Each verb has a
 * blocking form and an {@code ...Async} form; errors from the server (a bad argument,
 * a key rl did not write) arrive as Lettuce's {@code RedisCommandExecutionException}
 * with the server's message; a server with neither edition fails each call with
 * {@link RlNotLoadedException}, and the first (until an edition is found again) is
 * logged ({@code System.Logger} {@code dev.rl.RlCommands}) with what to load and how.
 */
public final class RlCommands {

    /** rl's release this client belongs to (the module's and the library's version). */
    public static final String VERSION = "1.0.0";

    /** Which edition of rl answers: the module's commands or the function library. */
    public enum Edition {
        MODULE, FUNCTIONS
    }

    private static final StringCodec CODEC = StringCodec.UTF8;
    private static final System.Logger LOG = System.getLogger(RlCommands.class.getName());

    private final BaseRedisAsyncCommands<String, String> redis;
    private final Duration timeout;
    // null until a reply shows which edition answers (never COMMAND: see run).
    private volatile Edition edition;
    // While the edition is unknown: the first call's look for it, which the calls that
    // need it meanwhile wait for (a burst of first calls sends one probe). It completes
    // with the edition found; with null when that call met an error of its own; or with
    // RlNotLoadedException.
    private final Object lock = new Object();
    private CompletableFuture<Edition> finding;
    // Logged that rl is not loaded, since an edition was last found.
    private final AtomicBoolean told = new AtomicBoolean();

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

    private <T> CompletionStage<T> run(Function<Edition, Line> build, Supplier<CommandOutput<String, String, T>> output) {
        return run(build, output, false);
    }

    /**
     * Sends the line {@code build} makes for the server's edition. When the server
     * answers that this edition is gone ({@code unknown command} for the module's,
     * {@code Function not found} for the library's), the edition is found again, once
     * for all the calls that met that answer, and the line sent again in it.
     */
    private <T> CompletionStage<T> run(Function<Edition, Line> build, Supplier<CommandOutput<String, String, T>> output,
            boolean probe) {
        Edition known = edition;
        if (known == null) {
            return find(build, output, probe);
        }
        if (probe) {
            return CompletableFuture.completedFuture(null);
        }
        return dispatch(build.apply(known), output).handle((reply, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(reply);
            }
            Throwable cause = unwrap(error);
            if (!gone(cause, known)) {
                return CompletableFuture.<T>failedFuture(cause);
            }
            synchronized (lock) {
                if (edition == known) { // unless another call found it again
                    edition = null;
                }
            }
            return find(build, output, false);
        }).thenCompose(Function.identity());
    }

    /**
     * While the edition is unknown: the first call to ask finds it by its own line
     * ({@link #discover}); the calls that ask meanwhile wait for that call and send their
     * lines in the edition it found, or fail with its {@link RlNotLoadedException}. When
     * it found none for a reason of its own ({@code NOPERM} on its key, a lost
     * connection), each goes its own way.
     */
    private <T> CompletionStage<T> find(Function<Edition, Line> build,
            Supplier<CommandOutput<String, String, T>> output, boolean probe) {
        CompletableFuture<Edition> lead = null;
        CompletableFuture<Edition> other;
        synchronized (lock) {
            Edition known = edition;
            if (known != null) {
                return probe ? CompletableFuture.completedFuture(null) : dispatch(build.apply(known), output);
            }
            other = finding;
            if (other == null) {
                lead = new CompletableFuture<>();
                finding = lead;
            }
        }
        if (lead != null) {
            CompletableFuture<Edition> mine = lead;
            return this.<T>discover(build, output, probe).whenComplete((reply, error) -> end(mine, error));
        }
        return other.handle((found, error) -> {
            if (found != null) {
                return probe ? CompletableFuture.<T>completedFuture(null) : dispatch(build.apply(found), output);
            }
            Throwable cause = error == null ? null : unwrap(error);
            if (cause instanceof RlNotLoadedException) {
                return CompletableFuture.<T>failedFuture(cause);
            }
            return this.<T>discover(build, output, probe);
        }).thenCompose(Function.identity());
    }

    /** Ends the leading call's look: the calls waiting take what it found. */
    private void end(CompletableFuture<Edition> mine, Throwable error) {
        synchronized (lock) {
            if (finding == mine) {
                finding = null;
            }
        }
        Edition found = edition;
        Throwable cause = error == null ? null : unwrap(error);
        if (found != null) {
            mine.complete(found);
        } else if (cause instanceof RlNotLoadedException) {
            mine.completeExceptionally(cause);
        } else {
            mine.complete(null);
        }
    }

    /**
     * Sends the module's line while the edition is unknown: any reply, or an error of
     * rl's own (a bad argument, {@code WRONGTYPE}), shows the module is there;
     * {@code unknown command} shows it is not, and then the library is asked for
     * ({@code FCALL_RO rl_version 0}) and, if loaded, sent the library's line (unless
     * {@code probe}: the question was only which edition, and the reply is null).
     * {@code COMMAND}, which the README's ACL recipe does not grant, is never sent.
     * {@code NOPERM} and connection errors come back as they are, the edition still
     * unknown.
     */
    private <T> CompletionStage<T> discover(Function<Edition, Line> build,
            Supplier<CommandOutput<String, String, T>> output, boolean probe) {
        return dispatch(build.apply(Edition.MODULE), output).handle((reply, error) -> {
            if (error == null) {
                found(Edition.MODULE);
                return CompletableFuture.completedFuture(reply);
            }
            Throwable cause = unwrap(error);
            String text = String.valueOf(cause.getMessage());
            if (!(cause instanceof RedisCommandExecutionException) || text.startsWith("NOPERM")) {
                return CompletableFuture.<T>failedFuture(cause);
            }
            if (!text.toLowerCase(Locale.ROOT).contains("unknown command")) {
                found(Edition.MODULE);
                return CompletableFuture.<T>failedFuture(cause);
            }
            return library().thenCompose(e -> probe ? CompletableFuture.<T>completedFuture(null)
                    : dispatch(build.apply(e), output));
        }).thenCompose(Function.identity());
    }

    /**
     * The library, when the module is not loaded: {@code FCALL_RO rl_version 0} answers.
     * When the server knows no such function, rl is not loaded; any other error (a lost
     * connection) comes back as it is.
     */
    private CompletionStage<Edition> library() {
        CommandArgs<String, String> version = new CommandArgs<>(CODEC).add("rl_version").add(0);
        return redis.dispatch(CommandType.FCALL_RO, new NestedMultiOutput<>(CODEC), version).handle((ok, error) -> {
            if (error != null) {
                Throwable cause = unwrap(error);
                if (cause instanceof RedisCommandExecutionException && gone(cause, Edition.FUNCTIONS)) {
                    throw notLoaded(cause);
                }
                throw cause instanceof RuntimeException r ? r : new CompletionException(cause);
            }
            found(Edition.FUNCTIONS);
            return Edition.FUNCTIONS;
        });
    }

    private void found(Edition e) {
        edition = e;
        told.set(false);
    }

    /**
     * The error every call meets while the server has neither edition; the first one
     * (until an edition is found again) is logged too, so the log says once what to load
     * and how, not per call.
     */
    private RlNotLoadedException notLoaded(Throwable cause) {
        RlNotLoadedException e = new RlNotLoadedException("rl is not loaded: the server has neither the rl module "
                + "(RL.* is an unknown command) nor the rl function library (FCALL_RO rl_version 0: "
                + cause.getMessage() + "). Load the module (loadmodule /path/to/librl.so in the server's config, "
                + "or MODULE LOAD), or the library: redis-cli -x FUNCTION LOAD REPLACE < rl-" + VERSION
                + ".lua (the release's file; from a checkout of rl, functions/rl.lua or make load-functions), "
                + "on every primary of a cluster", cause);
        if (told.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, e.getMessage());
        }
        return e;
    }

    /** Whether {@code error} is the server's answer that {@code e} is not there. */
    private static boolean gone(Throwable error, Edition e) {
        if (!(error instanceof RedisCommandExecutionException)) {
            return false;
        }
        String text = String.valueOf(error.getMessage()).toLowerCase(Locale.ROOT);
        return text.contains("unknown command") || (e == Edition.FUNCTIONS && text.contains("function not found"));
    }

    private static Throwable unwrap(Throwable error) {
        Throwable cause = error;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
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
