// Package service answers envoy.service.ratelimit.v3.RateLimitService's
// ShouldRateLimit as envoyproxy/ratelimit does: the configuration's limits
// per descriptor (replaces, unlimited, shadow_mode, Envoy's per-descriptor
// override, hits_addend), the statuses and overall code, the optional
// x-ratelimit headers, and its stats; the decisions come from rl.
package service

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"rl.invalid/rl-ratelimit/config"
	"rl.invalid/rl-ratelimit/limiter"
	"rl.invalid/rl-ratelimit/metrics"
)

// Options are the settings the answers depend on.
type Options struct {
	GlobalShadowMode bool
	NearLimitRatio   float64
	HeadersEnabled   bool
	HeaderLimit      string
	HeaderRemaining  string
	HeaderReset      string
}

// Service implements pb.RateLimitServiceServer.
type Service struct {
	pb.UnimplementedRateLimitServiceServer
	cache   *limiter.Cache
	opts    Options
	metrics *metrics.Registry
	log     *slog.Logger
	config  atomic.Pointer[config.Config]
	// Now is the clock (the fixed window's window and reset, as
	// envoyproxy/ratelimit reads them from its own clock).
	Now func() time.Time
}

// New returns a service deciding with cache.
func New(cache *limiter.Cache, opts Options, m *metrics.Registry, log *slog.Logger) *Service {
	return &Service{cache: cache, opts: opts, metrics: m, log: log, Now: time.Now}
}

// SetConfig swaps in a new configuration (nil: none loaded).
func (s *Service) SetConfig(c *config.Config) { s.config.Store(c) }

// Config is the configuration in use.
func (s *Service) Config() *config.Config { return s.config.Load() }

// envoyproxy/ratelimit answers these as plain errors (gRPC code Unknown),
// with these texts.
var (
	errNoDomain      = status.Error(codes.Unknown, "rate limit domain must not be empty")
	errNoDescriptors = status.Error(codes.Unknown, "rate limit descriptor list must not be empty")
	errNoConfig      = status.Error(codes.Unknown, "no rate limit configuration loaded")
)

// ShouldRateLimit decides a request.
func (s *Service) ShouldRateLimit(ctx context.Context, req *pb.RateLimitRequest) (*pb.RateLimitResponse, error) {
	s.metrics.Add("ratelimit_service_total_requests", 1, "grpc_method", "ShouldRateLimit")
	if req.GetDomain() == "" {
		s.serviceError()
		return nil, errNoDomain
	}
	if len(req.GetDescriptors()) == 0 {
		s.serviceError()
		return nil, errNoDescriptors
	}
	cfg := s.config.Load()
	if cfg == nil {
		s.serviceError()
		return nil, errNoConfig
	}
	now := s.Now()
	descs := req.GetDescriptors()
	items := make([]limiter.Item, len(descs))
	unlimited := make([]bool, len(descs))
	replaced := map[string]bool{}
	for i, d := range descs {
		limit, known := cfg.Lookup(req.GetDomain(), d)
		if !known {
			s.metrics.Add("ratelimit_service_rate_limit_domain_not_found", 1, "domain", req.GetDomain())
		}
		if limit != nil {
			for _, r := range limit.Replaces {
				replaced[r] = true
			}
			if limit.Unlimited {
				unlimited[i], limit = true, nil
			}
		}
		items[i].Limit = limit
		for _, e := range d.GetEntries() {
			items[i].Entries = append(items[i].Entries, [2]string{e.GetKey(), e.GetValue()})
		}
		if h := d.GetHitsAddend(); h != nil {
			items[i].Hits = h.GetValue()
		} else {
			items[i].Hits = max(1, uint64(req.GetHitsAddend()))
		}
	}
	for i := range items {
		if l := items[i].Limit; l != nil && l.Name != "" && replaced[l.Name] {
			items[i].Limit = nil
		}
		if items[i].Limit != nil {
			s.metrics.Limit(metrics.TotalHits, items[i].Limit.FullKey, items[i].Hits)
		}
	}
	decisions, err := s.cache.Decide(ctx, req.GetDomain(), items, now)
	if err != nil {
		var bad limiter.BadRequest
		if errors.As(err, &bad) {
			s.serviceError()
			return nil, status.Error(codes.InvalidArgument, bad.Error())
		}
		s.metrics.Add("ratelimit_service_should_rate_limit_error", 1, "err_type", "redis_error")
		s.log.Error("the server did not answer", "error", err)
		return nil, status.Error(codes.Unavailable, "rl-ratelimit: "+err.Error())
	}
	return s.respond(items, unlimited, decisions, now), nil
}

func (s *Service) serviceError() {
	s.metrics.Add("ratelimit_service_should_rate_limit_error", 1, "err_type", "service_error")
}

// respond builds the response from the decisions, as envoyproxy/ratelimit
// builds its own from its counters.
func (s *Service) respond(items []limiter.Item, unlimited []bool, decisions []limiter.Decision, now time.Time) *pb.RateLimitResponse {
	resp := &pb.RateLimitResponse{OverallCode: pb.RateLimitResponse_OK,
		Statuses: make([]*pb.RateLimitResponse_DescriptorStatus, len(items))}
	var closest *pb.RateLimitResponse_DescriptorStatus
	closestLeft := uint32(math.MaxUint32)
	for i, it := range items {
		switch {
		case unlimited[i]:
			resp.Statuses[i] = &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK, LimitRemaining: math.MaxUint32}
			continue
		case it.Limit == nil:
			resp.Statuses[i] = &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK}
			continue
		}
		d := decisions[i]
		st := &pb.RateLimitResponse_DescriptorStatus{
			Code:               pb.RateLimitResponse_OK,
			CurrentLimit:       it.Limit.Limit,
			DurationUntilReset: s.reset(it.Limit, d, now),
		}
		if d.Allowed {
			st.LimitRemaining = uint32(min(d.Remaining, math.MaxUint32))
		} else {
			st.Code = pb.RateLimitResponse_OVER_LIMIT
		}
		s.count(it, d)
		if s.opts.HeadersEnabled && st.LimitRemaining < closestLeft {
			closest, closestLeft = st, st.LimitRemaining
		}
		if st.Code == pb.RateLimitResponse_OVER_LIMIT {
			if it.Limit.ShadowMode {
				st.Code = pb.RateLimitResponse_OK
			} else {
				resp.OverallCode = pb.RateLimitResponse_OVER_LIMIT
				closest, closestLeft = st, 0
			}
		}
		resp.Statuses[i] = st
	}
	if s.opts.HeadersEnabled && closest != nil {
		resp.ResponseHeadersToAdd = []*core.HeaderValue{
			{Key: s.opts.HeaderLimit, Value: strconv.FormatUint(uint64(closest.CurrentLimit.RequestsPerUnit), 10)},
			{Key: s.opts.HeaderRemaining, Value: strconv.FormatUint(uint64(closest.LimitRemaining), 10)},
			{Key: s.opts.HeaderReset, Value: strconv.FormatInt(ceilSeconds(closest.DurationUntilReset.AsDuration()), 10)},
		}
	}
	if resp.OverallCode == pb.RateLimitResponse_OVER_LIMIT && s.opts.GlobalShadowMode {
		resp.OverallCode = pb.RateLimitResponse_OK
		s.metrics.Add("ratelimit_service_global_shadow_mode", 1)
	}
	return resp
}

// reset is duration_until_reset. The fixed window's is envoyproxy/
// ratelimit's: the unit minus the clock's whole seconds into it. The
// sliding algorithms', to the millisecond: when denied, the wait until
// the same request is admitted; when admitted, until the subject is idle.
func (s *Service) reset(l *config.RateLimit, d limiter.Decision, now time.Time) *durationpb.Duration {
	if l.Algorithm == config.Fixed {
		unit := config.UnitSeconds(l.Limit.Unit)
		return &durationpb.Duration{Seconds: unit - now.Unix()%unit}
	}
	if !d.Allowed && d.Sent {
		return durationpb.New(d.RetryAfter)
	}
	return durationpb.New(d.ResetAfter)
}

func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// count updates the limit's stats as envoyproxy/ratelimit does, from the
// count after the request (requests_per_unit - remaining). A denied
// request's hits are all over the limit: rl counted none of them.
func (s *Service) count(it limiter.Item, d limiter.Decision) {
	key := it.Limit.FullKey
	rpu := uint64(it.Limit.Limit.RequestsPerUnit)
	near := uint64(math.Floor(float64(float32(rpu) * float32(s.opts.NearLimitRatio))))
	if !d.Allowed {
		s.metrics.Limit(metrics.OverLimit, key, it.Hits)
		if it.Limit.ShadowMode {
			s.metrics.Limit(metrics.ShadowMode, key, it.Hits)
		}
		return
	}
	after := rpu - min(uint64(max(d.Remaining, 0)), rpu)
	if after > near {
		s.metrics.Limit(metrics.NearLimit, key, min(it.Hits, after-near))
	}
	s.metrics.Limit(metrics.WithinLimit, key, it.Hits)
}
