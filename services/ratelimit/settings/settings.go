// Package settings reads envoyproxy/ratelimit's environment settings, the
// same names with the same defaults, and refuses at start, naming the
// variable, each one rl-ratelimit cannot honour: a setting is never
// silently ignored.
package settings

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Settings are the environment settings rl-ratelimit honours.
type Settings struct {
	Host      string // HTTP (/json, /healthcheck)
	Port      int
	DebugHost string // /metrics
	DebugPort int
	GrpcHost  string
	GrpcPort  int
	GrpcUds   string

	GrpcMaxConnectionAge      time.Duration
	GrpcMaxConnectionAgeGrace time.Duration
	GrpcServerUseTLS          bool
	GrpcServerTLSCert         string
	GrpcServerTLSKey          string
	GrpcClientTLSCACert       string
	GrpcClientTLSSAN          string

	LogLevel  string
	LogFormat string

	ForceStartWithoutInitialConfig bool
	HealthyWithAtLeastOneConfig    bool

	UsePrometheus  bool
	PrometheusAddr string
	PrometheusPath string
	DisableStats   bool
	ExtraTags      map[string]string

	RuntimePath           string
	RuntimeSubdirectory   string
	RuntimeAppDirectory   string
	RuntimeIgnoreDotFiles bool
	RuntimeWatchRoot      bool
	MergeDomainConfig     bool

	NearLimitRatio float64
	CacheKeyPrefix string

	HeadersEnabled  bool
	HeaderLimit     string
	HeaderRemaining string
	HeaderReset     string

	RedisSocketType   string
	RedisType         string
	RedisURL          string
	RedisPoolSize     int
	RedisAuth         string
	RedisSentinelAuth string
	RedisTLS          bool
	RedisTLSCert      string
	RedisTLSKey       string
	RedisTLSCACert    string
	RedisTLSSkipVerif bool
	RedisTimeout      time.Duration
	RedisHealthCheck  bool

	GlobalShadowMode bool

	// AlgorithmsFile is rl-ratelimit's own setting (RL_ALGORITHMS_FILE):
	// a file naming each limit's algorithm by its full key, for config
	// files that envoyproxy/ratelimit must still be able to read.
	AlgorithmsFile string

	// Warnings are settings accepted that tune only envoyproxy/ratelimit's
	// own client (no effect on any answer): logged at start.
	Warnings []string
}

// env reads the environment through a lookup function (os.LookupEnv, or
// a map in tests), recording the first error, which names the variable.
type env struct {
	lookup func(string) (string, bool)
	err    error
}

func (e *env) fail(format string, a ...any) {
	if e.err == nil {
		e.err = fmt.Errorf(format, a...)
	}
}

func (e *env) str(name, def string) string {
	if v, ok := e.lookup(name); ok {
		return v
	}
	return def
}

func (e *env) set(name string) bool {
	v, ok := e.lookup(name)
	return ok && v != ""
}

func (e *env) integer(name string, def int) int {
	v, ok := e.lookup(name)
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		e.fail("%s=%q is not an integer", name, v)
	}
	return n
}

func (e *env) boolean(name string, def bool) bool {
	v, ok := e.lookup(name)
	if !ok || v == "" {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		e.fail("%s=%q is not a boolean (true or false)", name, v)
	}
	return b
}

func (e *env) duration(name string, def time.Duration) time.Duration {
	v, ok := e.lookup(name)
	if !ok || v == "" {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		e.fail("%s=%q is not a duration (e.g. 10s)", name, v)
	}
	return d
}

func (e *env) float(name string, def float64) float64 {
	v, ok := e.lookup(name)
	if !ok || v == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		e.fail("%s=%q is not a number", name, v)
	}
	return f
}

// tags reads "k1:v1,k2:v2" (envconfig's map syntax, as envoyproxy/ratelimit
// takes EXTRA_TAGS).
func (e *env) tags(name string) map[string]string {
	v, ok := e.lookup(name)
	if !ok || v == "" {
		return nil
	}
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		k, val, found := strings.Cut(pair, ":")
		if !found || k == "" {
			e.fail("%s=%q: each tag must be key:value", name, v)
			return nil
		}
		out[k] = val
	}
	return out
}

// FromEnv reads the process environment.
func FromEnv() (Settings, error) { return Load(os.LookupEnv) }

// Load reads the settings through lookup.
func Load(lookup func(string) (string, bool)) (Settings, error) {
	e := &env{lookup: lookup}
	s := Settings{
		Host:      e.str("HOST", "0.0.0.0"),
		Port:      e.integer("PORT", 8080),
		DebugHost: e.str("DEBUG_HOST", "0.0.0.0"),
		DebugPort: e.integer("DEBUG_PORT", 6070),
		GrpcHost:  e.str("GRPC_HOST", "0.0.0.0"),
		GrpcPort:  e.integer("GRPC_PORT", 8081),
		GrpcUds:   e.str("GRPC_UDS", ""),

		GrpcMaxConnectionAge:      e.duration("GRPC_MAX_CONNECTION_AGE", 24*time.Hour),
		GrpcMaxConnectionAgeGrace: e.duration("GRPC_MAX_CONNECTION_AGE_GRACE", time.Hour),
		GrpcServerUseTLS:          e.boolean("GRPC_SERVER_USE_TLS", false),
		GrpcServerTLSCert:         e.str("GRPC_SERVER_TLS_CERT", ""),
		GrpcServerTLSKey:          e.str("GRPC_SERVER_TLS_KEY", ""),
		GrpcClientTLSCACert:       e.str("GRPC_CLIENT_TLS_CACERT", ""),
		GrpcClientTLSSAN:          e.str("GRPC_CLIENT_TLS_SAN", ""),

		LogLevel:  strings.ToUpper(e.str("LOG_LEVEL", "WARN")),
		LogFormat: strings.ToLower(e.str("LOG_FORMAT", "text")),

		ForceStartWithoutInitialConfig: e.boolean("FORCE_START_WITHOUT_INITIAL_CONFIG", false),
		HealthyWithAtLeastOneConfig:    e.boolean("HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED", false),

		UsePrometheus:  e.boolean("USE_PROMETHEUS", false),
		PrometheusAddr: e.str("PROMETHEUS_ADDR", ":9090"),
		PrometheusPath: e.str("PROMETHEUS_PATH", "/metrics"),
		DisableStats:   e.boolean("DISABLE_STATS", false),
		ExtraTags:      e.tags("EXTRA_TAGS"),

		RuntimePath:           e.str("RUNTIME_ROOT", "/srv/runtime_data/current"),
		RuntimeSubdirectory:   e.str("RUNTIME_SUBDIRECTORY", ""),
		RuntimeAppDirectory:   e.str("RUNTIME_APPDIRECTORY", "config"),
		RuntimeIgnoreDotFiles: e.boolean("RUNTIME_IGNOREDOTFILES", false),
		RuntimeWatchRoot:      e.boolean("RUNTIME_WATCH_ROOT", true),
		MergeDomainConfig:     e.boolean("MERGE_DOMAIN_CONFIG", false),

		NearLimitRatio: e.float("NEAR_LIMIT_RATIO", 0.8),
		CacheKeyPrefix: e.str("CACHE_KEY_PREFIX", ""),

		HeadersEnabled:  e.boolean("LIMIT_RESPONSE_HEADERS_ENABLED", false),
		HeaderLimit:     e.str("LIMIT_LIMIT_HEADER", "RateLimit-Limit"),
		HeaderRemaining: e.str("LIMIT_REMAINING_HEADER", "RateLimit-Remaining"),
		HeaderReset:     e.str("LIMIT_RESET_HEADER", "RateLimit-Reset"),

		RedisSocketType:   strings.ToLower(e.str("REDIS_SOCKET_TYPE", "unix")),
		RedisType:         strings.ToUpper(e.str("REDIS_TYPE", "SINGLE")),
		RedisURL:          e.str("REDIS_URL", "/var/run/nutcracker/ratelimit.sock"),
		RedisPoolSize:     e.integer("REDIS_POOL_SIZE", 10),
		RedisAuth:         e.str("REDIS_AUTH", ""),
		RedisSentinelAuth: e.str("REDIS_SENTINEL_AUTH", ""),
		RedisTLS:          e.boolean("REDIS_TLS", false),
		RedisTLSCert:      e.str("REDIS_TLS_CLIENT_CERT", ""),
		RedisTLSKey:       e.str("REDIS_TLS_CLIENT_KEY", ""),
		RedisTLSCACert:    e.str("REDIS_TLS_CACERT", ""),
		RedisTLSSkipVerif: e.boolean("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", false),
		RedisTimeout:      e.duration("REDIS_TIMEOUT", 10*time.Second),
		RedisHealthCheck:  e.boolean("REDIS_HEALTH_CHECK_ACTIVE_CONNECTION", false),

		GlobalShadowMode: e.boolean("SHADOW_MODE", false),
		AlgorithmsFile:   e.str("RL_ALGORITHMS_FILE", ""),
	}
	if e.err != nil {
		return s, e.err
	}
	if err := refuse(e, &s); err != nil {
		return s, err
	}
	return s, e.err
}

// refuse rejects what rl-ratelimit cannot honour, each with its variable's
// name and why; it accepts (with a warning) the knobs that only tune
// envoyproxy/ratelimit's own Redis client.
func refuse(e *env, s *Settings) error {
	unsupported := func(name, why string) error {
		return fmt.Errorf("%s is set but rl-ratelimit cannot honour it: %s", name, why)
	}
	if v := strings.ToLower(e.str("BACKEND_TYPE", "redis")); v != "redis" {
		return unsupported("BACKEND_TYPE="+v, "rl-ratelimit decides in Redis or Valkey only (the backend is rl)")
	}
	if v := strings.ToUpper(e.str("CONFIG_TYPE", "FILE")); v != "FILE" {
		return unsupported("CONFIG_TYPE="+v, "only FILE configuration is read (no xDS)")
	}
	trueOnly := []struct{ name, why string }{
		{"REDIS_PERSECOND", "a second Redis for per-second limits is not supported; one server (or Cluster) holds every limit"},
		{"USE_STATSD", "statsd is not emitted; set USE_STATSD=false and use USE_PROMETHEUS=true (the same counters, scraped)"},
		{"USE_DOG_STATSD", "DogStatsD is not emitted; use USE_PROMETHEUS=true"},
		{"TRACING_ENABLED", "OpenTelemetry tracing is not implemented"},
		{"QUOTA_MODE", "quota mode is not implemented"},
		{"RESPONSE_DYNAMIC_METADATA", "dynamic metadata in responses is not implemented"},
		{"REDIS_PERSECOND_TLS", "REDIS_PERSECOND is not supported"},
	}
	for _, t := range trueOnly {
		if e.boolean(t.name, false) {
			return unsupported(t.name+"=true", t.why)
		}
	}
	if e.integer("LOCAL_CACHE_SIZE_IN_BYTES", 0) != 0 {
		return unsupported("LOCAL_CACHE_SIZE_IN_BYTES", "the local over-limit cache answers from memory without asking the server; rl-ratelimit always asks the server")
	}
	for _, name := range []string{"PROMETHEUS_MAPPER_YAML", "MEMCACHE_HOST_PORT", "MEMCACHE_SRV", "USE_DOG_STATSD_MOGRIFIERS"} {
		if e.set(name) {
			return unsupported(name, "not implemented")
		}
	}
	if v := strings.ToUpper(e.str("REDIS_POOL_ON_EMPTY_BEHAVIOR", "WAIT")); v != "WAIT" {
		return unsupported("REDIS_POOL_ON_EMPTY_BEHAVIOR="+v, "the pool waits for a free connection (WAIT), as envoyproxy/ratelimit's radix v4 does")
	}
	for _, name := range []string{"REDIS_PIPELINE_WINDOW", "REDIS_PIPELINE_LIMIT", "EXPIRATION_JITTER_MAX_SECONDS", "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"} {
		if e.set(name) {
			s.Warnings = append(s.Warnings, name+" has no effect in rl-ratelimit (see docs/envoy.md): "+
				map[string]string{
					"REDIS_PIPELINE_WINDOW":                   "each request is already one pipelined round trip per node",
					"REDIS_PIPELINE_LIMIT":                    "deprecated in envoyproxy/ratelimit too",
					"EXPIRATION_JITTER_MAX_SECONDS":           "rl's keys expire with their window",
					"STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT": "rl never counts a denied request",
				}[name])
		}
	}
	switch s.RedisType {
	case "SINGLE", "CLUSTER", "SENTINEL":
	default:
		return fmt.Errorf("REDIS_TYPE=%q: expected SINGLE, CLUSTER or SENTINEL", s.RedisType)
	}
	switch s.RedisSocketType {
	case "tcp", "unix":
	default:
		return fmt.Errorf("REDIS_SOCKET_TYPE=%q: expected tcp or unix", s.RedisSocketType)
	}
	switch s.LogLevel {
	case "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL", "PANIC", "TRACE":
	default:
		return fmt.Errorf("LOG_LEVEL=%q: expected DEBUG, INFO, WARN or ERROR", s.LogLevel)
	}
	if s.LogFormat != "text" && s.LogFormat != "json" {
		return fmt.Errorf("LOG_FORMAT=%q: expected text or json", s.LogFormat)
	}
	if s.NearLimitRatio < 0 || s.NearLimitRatio > 1 {
		return fmt.Errorf("NEAR_LIMIT_RATIO=%v: expected a number from 0 to 1", s.NearLimitRatio)
	}
	if s.GrpcServerUseTLS && (s.GrpcServerTLSCert == "" || s.GrpcServerTLSKey == "") {
		return fmt.Errorf("GRPC_SERVER_USE_TLS=true needs GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY")
	}
	if s.RedisPoolSize < 1 {
		return fmt.Errorf("REDIS_POOL_SIZE=%d: expected at least 1", s.RedisPoolSize)
	}
	return nil
}
