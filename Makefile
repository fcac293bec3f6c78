# rl: rate limiting inside Redis and Valkey. `make help` lists the targets.
SHELL := /bin/bash
PORT ?= 6379
MODULE := target/release/librl.so
SERVER ?= redis-server
# Module load arguments for `make run`, e.g. MODULE_ARGS="CL.THROTTLE off"
MODULE_ARGS ?=

.PHONY: help deps build build-valkey run test bench lint fmt clean fuzz check-memory

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

deps: ## Install what a fresh Debian machine lacks (libclang, Redis 7.0, Redis 8.2, Valkey 9.1)
	@scripts/deps.sh

build: ## Build the module: target/release/librl.so
	cargo build --release

build-valkey: ## Build the native Valkey module: target/valkey/release/librl.so
	cargo build --release --no-default-features --features valkey --target-dir target/valkey

run: deps build ## Start a server with the module on PORT (default 6379); SERVER=.deps/valkey/valkey-server for Valkey
	@echo "rl: starting $(SERVER) on port $(PORT); try: redis-cli -p $(PORT) RL.SLIDE user:42 100 60000"
	$(SERVER) redis.conf.example --port $(PORT) --loadmodule $(CURDIR)/$(MODULE) $(MODULE_ARGS)

test: deps build build-valkey ## Unit, property and real-server tests: both builds on Redis 7.0, Redis 8.2 and Valkey 9.1; then check-memory
	cargo test --release --no-fail-fast -- --test-threads=2
	scripts/check-memory.sh
	$(MAKE) --no-print-directory test-docs

.PHONY: test-docs
test-docs: build ## Run the Python snippets and replay the redis-cli sessions of README.md and docs/ (Valkey, stopped clock)
	tests/docs/run

bench: deps build build-valkey ## Core criterion benchmarks, then the server benchmark (tables in target/bench/)
	cargo bench --bench core
	cargo bench --bench server

lint: ## rustfmt and clippy, warnings are errors
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --lib --no-default-features --features valkey --target-dir target/valkey -- -D warnings

fmt: ## Format the code
	cargo fmt

clean: ## Remove build output (keeps .deps)
	cargo clean

FUZZ_SECONDS ?= 60

fuzz: ## libFuzzer over the core parsers and decisions for FUZZ_SECONDS (default 60; needs nightly and cargo-fuzz)
	@command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
	mkdir -p fuzz/corpus/core
	cd fuzz && cargo +nightly fuzz run core corpus/core regressions -- -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048

check-memory: build build-valkey ## A short workload under valgrind memcheck (both builds, Valkey); fails on memory the module definitely loses
	scripts/check-memory.sh
