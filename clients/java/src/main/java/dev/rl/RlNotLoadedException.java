package dev.rl;

/**
 * The server has neither rl's module nor its function library. Its message says what to
 * load and how: the module's {@code loadmodule} line, or the release's
 * {@code rl-<version>.lua} (a checkout's {@code functions/rl.lua}) with
 * {@code redis-cli -x FUNCTION LOAD REPLACE}. Each call fails so until rl is loaded; the
 * next call after that finds it.
 */
public class RlNotLoadedException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public RlNotLoadedException(String message, Throwable cause) {
        super(message, cause);
    }
}
