// Package server serves the service as envoyproxy/ratelimit does: gRPC
// (RateLimitService and grpc.health.v1) on GRPC_HOST:GRPC_PORT or
// GRPC_UDS, HTTP on HOST:PORT (/json, /healthcheck), the debug port
// (/metrics), Prometheus on PROMETHEUS_ADDR when USE_PROMETHEUS=true; a
// clean shutdown on SIGTERM.
package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"rl.invalid/rl-ratelimit/metrics"
	"rl.invalid/rl-ratelimit/settings"
)

// Health is the health check's state: healthy while every component is.
type Health struct {
	mu    sync.Mutex
	parts map[string]bool
	grpc  *health.Server
}

// Health components, as envoyproxy/ratelimit names them.
const (
	Config  = "config"
	Redis   = "redis"
	Sigterm = "sigterm"
)

// NewHealth starts healthy in every component given as true.
func NewHealth(parts map[string]bool) *Health {
	h := &Health{parts: parts, grpc: health.NewServer()}
	h.publish()
	return h
}

// Set marks a component healthy or not.
func (h *Health) Set(part string, ok bool) {
	h.mu.Lock()
	if _, known := h.parts[part]; known {
		h.parts[part] = ok
	}
	h.mu.Unlock()
	h.publish()
}

// OK reports whether every component is healthy.
func (h *Health) OK() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ok := range h.parts {
		if !ok {
			return false
		}
	}
	return true
}

func (h *Health) publish() {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if h.OK() {
		st = healthpb.HealthCheckResponse_SERVING
	}
	h.grpc.SetServingStatus("ratelimit", st)
	h.grpc.SetServingStatus("", st)
}

// ServeHTTP answers /healthcheck: 200 "OK", or 500.
func (h *Health) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if h.OK() {
		_, _ = w.Write([]byte("OK"))
		return
	}
	w.WriteHeader(http.StatusInternalServerError)
}

// Server is the running listeners.
type Server struct {
	grpc    *grpc.Server
	https   []*http.Server
	log     *slog.Logger
	Health  *Health
	GrpcLis net.Listener
}

// JSON answers /json: a RateLimitRequest in protobuf's JSON, the
// response likewise; 429 when over the limit, 400 for a bad body or a
// refused request, as envoyproxy/ratelimit's endpoint does.
func JSON(svc pb.RateLimitServiceServer, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req pb.RateLimitRequest
		if err == nil {
			err = protojson.Unmarshal(body, &req)
		}
		if err != nil {
			log.Warn("/json: bad request body", "error", err)
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		resp, err := svc.ShouldRateLimit(r.Context(), &req)
		if err != nil {
			log.Warn("/json: request refused", "error", status.Convert(err).Message())
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		out, err := protojson.Marshal(resp)
		if err != nil {
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch resp.GetOverallCode() {
		case pb.RateLimitResponse_OVER_LIMIT:
			w.WriteHeader(http.StatusTooManyRequests)
		case pb.RateLimitResponse_UNKNOWN:
			w.WriteHeader(http.StatusInternalServerError)
		}
		_, _ = w.Write(out)
	}
}

// Start opens every listener (so that a port in use fails the start) and
// serves in the background.
func Start(s settings.Settings, svc pb.RateLimitServiceServer, h *Health, m *metrics.Registry, log *slog.Logger) (*Server, error) {
	opts := []grpc.ServerOption{grpc.KeepaliveParams(keepalive.ServerParameters{
		MaxConnectionAge:      s.GrpcMaxConnectionAge,
		MaxConnectionAgeGrace: s.GrpcMaxConnectionAgeGrace,
	})}
	if s.GrpcServerUseTLS {
		tc, err := serverTLS(s, log)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	srv := &Server{grpc: grpc.NewServer(opts...), log: log, Health: h}
	pb.RegisterRateLimitServiceServer(srv.grpc, svc)
	healthpb.RegisterHealthServer(srv.grpc, h.grpc)

	var err error
	if s.GrpcUds != "" {
		_ = os.Remove(s.GrpcUds)
		srv.GrpcLis, err = net.Listen("unix", s.GrpcUds)
	} else {
		srv.GrpcLis, err = net.Listen("tcp", net.JoinHostPort(s.GrpcHost, strconv.Itoa(s.GrpcPort)))
	}
	if err != nil {
		return nil, fmt.Errorf("gRPC listener (GRPC_HOST/GRPC_PORT or GRPC_UDS): %w", err)
	}
	main := http.NewServeMux()
	main.HandleFunc("/json", JSON(svc, log))
	main.Handle("/healthcheck", h)
	debug := http.NewServeMux()
	debug.Handle("/metrics", m)
	listeners := []struct {
		what, addr string
		mux        *http.ServeMux
	}{
		{"HTTP listener (HOST/PORT)", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), main},
		{"debug listener (DEBUG_HOST/DEBUG_PORT)", net.JoinHostPort(s.DebugHost, strconv.Itoa(s.DebugPort)), debug},
	}
	if s.UsePrometheus {
		prom := http.NewServeMux()
		prom.Handle(s.PrometheusPath, m)
		listeners = append(listeners, struct {
			what, addr string
			mux        *http.ServeMux
		}{"Prometheus listener (PROMETHEUS_ADDR)", s.PrometheusAddr, prom})
	}
	var lis []net.Listener
	for _, l := range listeners {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			srv.GrpcLis.Close()
			for _, o := range lis {
				o.Close()
			}
			return nil, fmt.Errorf("%s on %s: %w", l.what, l.addr, err)
		}
		lis = append(lis, ln)
		srv.https = append(srv.https, &http.Server{Handler: l.mux, ReadHeaderTimeout: 10 * time.Second})
	}
	go func() { _ = srv.grpc.Serve(srv.GrpcLis) }()
	for i, hs := range srv.https {
		go func() {
			if err := hs.Serve(lis[i]); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("HTTP listener stopped", "error", err)
			}
		}()
	}
	log.Info("listening", "grpc", srv.GrpcLis.Addr().String(), "http", lis[0].Addr().String(), "debug", lis[1].Addr().String())
	return srv, nil
}

// Stop fails the health check, lets the calls in flight finish (up to
// grace) and closes every listener.
func (srv *Server) Stop(grace time.Duration) {
	srv.Health.Set(Sigterm, false)
	done := make(chan struct{})
	go func() { srv.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		srv.grpc.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, hs := range srv.https {
		_ = hs.Shutdown(ctx)
	}
}

// serverTLS is gRPC's TLS: GRPC_SERVER_TLS_CERT/KEY, read again when they
// change, and with GRPC_CLIENT_TLS_CACERT, mutual TLS: a client must show
// a certificate that CA signed (and no other: unlike envoyproxy/ratelimit,
// the system's roots are not trusted for client certificates, which would
// admit any publicly issued one).
func serverTLS(s settings.Settings, log *slog.Logger) (*tls.Config, error) {
	certs := &certFiles{cert: s.GrpcServerTLSCert, key: s.GrpcServerTLSKey, log: log}
	if err := certs.load(); err != nil {
		return nil, fmt.Errorf("GRPC_SERVER_TLS_CERT/GRPC_SERVER_TLS_KEY: %w", err)
	}
	tc := &tls.Config{GetCertificate: certs.get, MinVersion: tls.VersionTLS12}
	if s.GrpcClientTLSCACert != "" {
		pem, err := os.ReadFile(s.GrpcClientTLSCACert)
		if err != nil {
			return nil, fmt.Errorf("GRPC_CLIENT_TLS_CACERT: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("GRPC_CLIENT_TLS_CACERT: no PEM certificate in %s", s.GrpcClientTLSCACert)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	if s.GrpcClientTLSSAN != "" {
		// envoyproxy/ratelimit checks the name only on a chain it verified,
		// so without a client CA it would accept any client: refused here.
		if tc.ClientCAs == nil {
			return nil, fmt.Errorf("GRPC_CLIENT_TLS_SAN needs GRPC_CLIENT_TLS_CACERT: a client's name is checked on the certificate that CA verified")
		}
		tc.VerifyPeerCertificate = clientNamed(s.GrpcClientTLSSAN)
	}
	return tc, nil
}

// clientNamed accepts a client whose verified certificate names san (a DNS
// name among its subject alternative names), as envoyproxy/ratelimit's
// GRPC_CLIENT_TLS_SAN does.
func clientNamed(san string) func([][]byte, [][]*x509.Certificate) error {
	return func(_ [][]byte, chains [][]*x509.Certificate) error {
		if len(chains) == 0 || len(chains[0]) == 0 {
			return fmt.Errorf("GRPC_CLIENT_TLS_SAN: no verified client certificate")
		}
		if err := chains[0][0].VerifyHostname(san); err != nil {
			return fmt.Errorf("GRPC_CLIENT_TLS_SAN: %w", err)
		}
		return nil
	}
}

// certFiles is the server's certificate and key, read again from their
// files when either changes (looked at, at a handshake, at most once a
// second), as envoyproxy/ratelimit reloads them: a rotated certificate (by
// cert-manager, a Kubernetes Secret, a renewal) is served without a
// restart. A pair that does not load (a key not yet written beside its new
// certificate) is logged, and the previous one keeps serving until it does.
type certFiles struct {
	cert, key string
	log       *slog.Logger

	mu      sync.Mutex
	serving *tls.Certificate
	read    [2][]byte // the files' bytes behind serving
	checked time.Time
	failed  string // the last error logged, not to log it every second
}

func (c *certFiles) load() error {
	certPEM, err := os.ReadFile(c.cert)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(c.key)
	if err != nil {
		return err
	}
	if c.serving != nil && bytes.Equal(certPEM, c.read[0]) && bytes.Equal(keyPEM, c.read[1]) {
		return nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	c.serving, c.read = &pair, [2][]byte{certPEM, keyPEM}
	return nil
}

func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= time.Second {
		c.checked = now
		before := c.serving
		if err := c.load(); err != nil {
			if err.Error() != c.failed {
				c.failed = err.Error()
				c.log.Error("GRPC_SERVER_TLS_CERT/GRPC_SERVER_TLS_KEY did not load again; the previous certificate keeps serving", "error", err)
			}
		} else if c.serving != before {
			c.failed = ""
			c.log.Info("the gRPC server certificate was read again", "file", c.cert)
		}
	}
	return c.serving, nil
}
