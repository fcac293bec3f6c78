# rl: rate limiting inside Redis and Valkey. `make help` lists the targets.
SHELL := /bin/bash
# Empty: 6379, or the next free port when 6379 is taken (scripts/run.sh).
PORT ?=
MODULE := target/release/librl.so
SERVER ?= redis-server
# Module load arguments for `make run`, e.g. MODULE_ARGS="CL.THROTTLE off"
MODULE_ARGS ?=
# `make run FUNCTIONS=1`: the function edition instead of the module.
FUNCTIONS ?=
# `make load-functions`: the server to load functions/rl.lua into.
HOST ?= 127.0.0.1
AUTH ?=
AUTH_USER ?=
CLI_ARGS ?=

.PHONY: help rust-version deps build build-valkey dist test-dist run load-functions functions test test-docs bench bench-bound perf-page lint fmt clean fuzz check-memory

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ name[NR] = $$1; text[NR] = $$2; if (length($$1) > w) w = length($$1) } END { for (i = 1; i <= NR; i++) printf "  %-*s  %s\n", w, name[i], text[i] }'

# Every target that runs cargo passes through this: cargo and rustc at least
# Cargo.toml's rust-version, or a message saying how to get them.
rust-version:
	@scripts/rust-version.sh

deps: rust-version ## Install what a fresh Debian 12 lacks: with apt (as root or sudo) build-essential, libclang-dev, redis-server 7.0, redis-tools, valgrind, faketime, python3-venv, nodejs, npm, prometheus-redis-exporter, ruby and the Ruby gems' tests' packages (ruby-rack-attack, ruby-redis, ruby-rack, ruby-activesupport, ruby-webrick, thin, ruby-minitest), PHP 8.2 with phpredis, Predis, phpunit, composer, Symfony 5.4 and Laravel 8.83 (clients/php's tests); with rustup rustfmt, clippy; in .deps/ a venv with redis-py 8, Redis 8.2, Valkey 9.1 (x86-64 only), Valkey 8.0 (Debian 12 backports), Valkey 8.1 and Redis 8.0 (built from Debian 13's sources, a few minutes once); for make dist ziglang and build (PyPI) in the venv, cargo-zigbuild (crates.io) in .deps/cargo
	@scripts/deps.sh

build: rust-version ## Build the module: target/release/librl.so
	cargo build --release

build-valkey: rust-version ## Build the native Valkey module: target/valkey/release/librl.so
	cargo build --release --no-default-features --features valkey --target-dir target/valkey

dist: deps ## The release files in dist/: both builds as tarballs (stripped, glibc 2.28), rl-<version>.lua, the adapters' packages, SHA256SUMS
	@scripts/dist.sh

test-dist: ## Test the release files of the last make dist from a folder with no checkout (part of make test)
	tests/dist/run

run: deps build ## Start a server with the module on PORT (default 6379, else the next free port); SERVER=.deps/valkey/valkey-server for Valkey; FUNCTIONS=1 for the function edition instead
	@PORT="$(PORT)" SERVER="$(SERVER)" MODULE="$(MODULE)" MODULE_ARGS="$(MODULE_ARGS)" FUNCTIONS="$(FUNCTIONS)" scripts/run.sh

load-functions: ## Load (or upgrade) the function edition functions/rl.lua into the server at HOST:PORT (default 127.0.0.1:6379), password AUTH, user AUTH_USER, extra redis-cli options CLI_ARGS
	@HOST="$(HOST)" PORT="$(PORT)" AUTH="$(AUTH)" AUTH_USER="$(AUTH_USER)" CLI_ARGS="$(CLI_ARGS)" scripts/load-functions.sh

functions: ## Assemble the function edition functions/rl.lua from functions/src/ (edit those, then run this; the file stays committed)
	@scripts/assemble-functions.sh

test: deps build build-valkey ## Unit, property and real-server tests (both builds on Redis 7.0, 8.2, Valkey 9.1; a subset on Valkey 8.0, 8.1, Redis 8.0), check-memory, the clients' tests, make dist and its files' tests, the docs examples; ends with "N passed, N failed, N skipped"
	@scripts/test.sh

test-docs: build ## Run the Python snippets and replay the redis-cli sessions of README.md and docs/ (Valkey, stopped clock)
	tests/docs/run

bench: deps build build-valkey ## Core criterion benches, instructions per call (callgrind), the server benchmark: tables and SVG charts in target/bench/, the page's blocks in target/bench/page/ (RL_REDIS_CELL=<libredis_cell.so> adds redis-cell's row)
	@scripts/bench.sh

bench-bound: deps ## The stale-backlog calls at removal bounds of 128, 64 and 32 (RL_BOUNDS), both editions, beside the server's own ZREMRANGEBYRANK: target/bench/bound.md (builds one module per bound in target/bound/)
	@scripts/bench-bound.sh

perf-page: ## Rewrite docs/performance.md's generated blocks and docs/perf/*.svg from the last make bench
	@scripts/perf-page.sh

lint: rust-version ## rustfmt and clippy, warnings are errors
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --lib --no-default-features --features valkey --target-dir target/valkey -- -D warnings

fmt: rust-version ## Format the code
	cargo fmt

clean: rust-version ## Remove build output (keeps .deps)
	cargo clean

FUZZ_SECONDS ?= 60

fuzz: rust-version ## libFuzzer over the core parsers and decisions for FUZZ_SECONDS (default 60; needs nightly and cargo-fuzz)
	@command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
	mkdir -p fuzz/corpus/core
	cd fuzz && cargo +nightly fuzz run core corpus/core regressions -- -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048

check-memory: build build-valkey ## A short workload under valgrind memcheck (both builds, Valkey); fails on an error or a definite loss in rl's frames
	scripts/check-memory.sh
