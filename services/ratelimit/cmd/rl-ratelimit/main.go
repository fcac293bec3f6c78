// Command rl-ratelimit is a drop-in for envoyproxy/ratelimit that decides
// in the server with rl: the same gRPC API, configuration files and
// environment settings, with an optional sliding algorithm per limit.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	rl "rl.invalid/rl"
	"rl.invalid/rl-ratelimit/config"
	"rl.invalid/rl-ratelimit/limiter"
	"rl.invalid/rl-ratelimit/metrics"
	"rl.invalid/rl-ratelimit/server"
	"rl.invalid/rl-ratelimit/service"
	"rl.invalid/rl-ratelimit/settings"
)

// Version is rl's release version.
const Version = rl.Version

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "version") {
		fmt.Println("rl-ratelimit " + Version)
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rl-ratelimit: "+err.Error())
		os.Exit(1)
	}
}

func newLogger(s settings.Settings) *slog.Logger {
	level := slog.LevelWarn
	switch s.LogLevel {
	case "DEBUG", "TRACE":
		level = slog.LevelDebug
	case "INFO":
		level = slog.LevelInfo
	case "ERROR", "FATAL", "PANIC":
		level = slog.LevelError
	}
	o := &slog.HandlerOptions{Level: level}
	if s.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, o))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, o))
}

func run() error {
	s, err := settings.FromEnv()
	if err != nil {
		return err
	}
	log := newLogger(s)
	// go-redis's own messages (a failed dial, a sentinel not answering)
	// in the same structured log, not as lines of their own on stderr.
	redis.SetLogger(redisLog{log})
	for _, w := range s.Warnings {
		log.Warn(w)
	}
	m := metrics.New(s.ExtraTags, s.DisableStats)

	src := config.Source{
		RuntimePath: s.RuntimePath, Subdirectory: s.RuntimeSubdirectory, AppDirectory: s.RuntimeAppDirectory,
		IgnoreDotFiles: s.RuntimeIgnoreDotFiles, MergeDomains: s.MergeDomainConfig, AlgorithmsFile: s.AlgorithmsFile,
	}
	cfg, sum, err := src.Load()
	if err != nil && !s.ForceStartWithoutInitialConfig {
		m.Add("ratelimit_service_config_load_error", 1)
		return fmt.Errorf("the configuration did not load: %w", err)
	}
	if err != nil {
		log.Error("starting without a configuration (FORCE_START_WITHOUT_INITIAL_CONFIG)", "error", err)
		cfg = nil
	} else {
		m.Add("ratelimit_service_config_load_success", 1)
		log.Info("configuration loaded", "domains", strings.Join(cfg.Domains(), ","))
	}

	rdb, err := newRedis(s)
	if err != nil {
		return err
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), s.RedisTimeout)
	err = rdb.Ping(ctx).Err()
	cancel()
	if err != nil {
		return fmt.Errorf("REDIS_URL=%s: %w%s", maskURL(s.RedisURL), err, redisHint(s, err))
	}
	cache := limiter.New(rdb, s.RedisType == "CLUSTER", s.CacheKeyPrefix, log)
	ctx, cancel = context.WithTimeout(context.Background(), s.RedisTimeout)
	e, err := cache.Detect(ctx)
	cancel()
	if err != nil {
		return fmt.Errorf("REDIS_URL=%s: %w", maskURL(s.RedisURL), err)
	}
	log.Info("rl found", "edition", e.String())

	svc := service.New(cache, service.Options{
		GlobalShadowMode: s.GlobalShadowMode, NearLimitRatio: s.NearLimitRatio,
		HeadersEnabled: s.HeadersEnabled, HeaderLimit: s.HeaderLimit,
		HeaderRemaining: s.HeaderRemaining, HeaderReset: s.HeaderReset,
	}, m, log)
	svc.SetConfig(cfg)

	parts := map[string]bool{server.Sigterm: true, server.Redis: true}
	if s.HealthyWithAtLeastOneConfig {
		parts[server.Config] = !cfg.Empty()
	}
	health := server.NewHealth(parts)
	srv, err := server.Start(s, svc, health, m, log)
	if err != nil {
		return err
	}

	bg, stop := context.WithCancel(context.Background())
	defer stop()
	go src.Watch(bg, sum, func(c *config.Config, err error) {
		if err != nil {
			m.Add("ratelimit_service_config_load_error", 1)
			log.Error("the new configuration did not load; the previous one keeps serving", "error", err)
			return
		}
		m.Add("ratelimit_service_config_load_success", 1)
		svc.SetConfig(c)
		if s.HealthyWithAtLeastOneConfig {
			health.Set(server.Config, !c.Empty())
		}
		log.Info("configuration reloaded", "domains", strings.Join(c.Domains(), ","))
	})
	if s.RedisHealthCheck {
		go watchRedis(bg, rdb, health, s.RedisTimeout)
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	sig := <-sigs
	log.Info("shutting down", "signal", sig.String())
	srv.Stop(10 * time.Second)
	return nil
}

// watchRedis fails the health check while the server does not answer
// PING (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION).
func watchRedis(ctx context.Context, rdb interface {
	Ping(context.Context) *redisStatus
}, h *server.Health, timeout time.Duration) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, cancel := context.WithTimeout(ctx, min(timeout, time.Second))
		err := rdb.Ping(c).Err()
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			h.Set(server.Redis, false)
		} else {
			h.Set(server.Redis, true)
		}
	}
}
