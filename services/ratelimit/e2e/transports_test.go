package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// The transports: Redis Sentinel, TLS to Redis, TLS (and mutual TLS) on
// gRPC, gRPC on a unix socket. Each runs envoyproxy/ratelimit and
// rl-ratelimit with the same settings, which both must accept, and
// compares their answers; then what only rl-ratelimit is checked for
// (what a wrong setting says, a failover).

// transportConfig is a limit of 3 an hour: a test's few requests never
// straddle its window's edge (hourStart sees to it).
const transportConfig = `
domain: transport
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 3}
`

// hourStart waits, if need be, so that the next `need` do not straddle an
// hour's edge (rarely: need/3600 of the runs).
func hourStart(t *testing.T, need time.Duration) {
	left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour))
	if left < need {
		t.Logf("waiting %v for the next hour", left.Round(time.Second))
		time.Sleep(left + 50*time.Millisecond)
	}
}

// fourHits sends four requests for user=value to each service in turn:
// OK with 2, 1 and 0 left, then OVER_LIMIT, every service's answer the
// same as the first's, field for field.
func fourHits(t *testing.T, value string, svcs ...*service) {
	t.Helper()
	for i := 0; i < 4; i++ {
		var first *pb.RateLimitResponse
		for _, s := range svcs {
			r := s.ask(t, rq("transport", 0, d("user", value)))
			if i < 3 {
				wantCodes(t, r, pb.RateLimitResponse_OK, uint32(2-i))
			} else {
				wantCodes(t, r, pb.RateLimitResponse_OVER_LIMIT, 0)
			}
			if first == nil {
				first = r
			} else if diff := sameAnswer(first, r); diff != "" {
				t.Fatalf("request %d for user=%s, %s against %s:\n%s", i+1, value, svcs[0].name, s.name, diff)
			}
		}
	}
}

// within polls ok until it holds, failing the test after d.
func within(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// refused runs rl-ratelimit with env, which must stop it at start with a
// message holding every one of want.
func refused(t *testing.T, what string, env map[string]string, want ...string) {
	t.Helper()
	code, out := runExit(t, rlBinary, env)
	for _, w := range want {
		if code == 0 || !strings.Contains(out, w) {
			t.Errorf("%s: exit %d, output %q; want a failure saying %q", what, code, out, w)
			return
		}
	}
}

// startSentinel starts a sentinel (redis-server --sentinel) watching
// primary as `name`, with primary's password and its own.
func startSentinel(t *testing.T, name string, primary *server, password string) (*server, *redis.SentinelClient) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	text := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 1\nsentinel auth-pass %[1]s %[3]s\n"+
		"sentinel down-after-milliseconds %[1]s 2000\nsentinel failover-timeout %[1]s 10000\n", name, primary.port, primary.opts.password)
	// The sentinel rewrites its file: writable, in a folder of its own.
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverOpts{conf: conf, extra: []string{"--sentinel"}, password: password})
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.addr(), Password: password})
	t.Cleanup(func() { sc.Close() })
	return s, sc
}

// TestSentinel: REDIS_TYPE=SENTINEL with REDIS_URL as
// <master name>,<sentinel host:port>, REDIS_AUTH for the data nodes and
// REDIS_SENTINEL_AUTH (a password, and user:password for an ACL user) for
// the sentinel, REDIS_SOCKET_TYPE left at its default (unix, which
// Sentinel ignores): both services find the primary and answer alike. A
// wrong sentinel password stops the start. Then SENTINEL FAILOVER to the
// replica: rl-ratelimit follows it, the counts it had replicated.
func TestSentinel(t *testing.T) {
	const master, dataPass, sentinelPass = "rl-primary", "data-pass", "sentinel-pass"
	ctx := context.Background()
	primary := startServer(t, serverOpts{module: true, password: dataPass, extra: []string{"--masterauth", dataPass}})
	replica := startServer(t, serverOpts{module: true, password: dataPass, extra: []string{"--masterauth", dataPass,
		"--replicaof", "127.0.0.1", strconv.Itoa(primary.port)}})
	sentinel, sc := startSentinel(t, master, primary, sentinelPass)
	if err := sentinel.client.Do(ctx, "ACL", "SETUSER", "watcher", "on", ">watch-pass", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, transportConfig)
	env := func(prefix, sentinelAuth string) map[string]string {
		e := baseEnv(master+","+sentinel.addr(), rt, prefix)
		e["REDIS_TYPE"], e["REDIS_AUTH"], e["REDIS_SENTINEL_AUTH"] = "SENTINEL", dataPass, sentinelAuth
		delete(e, "REDIS_SOCKET_TYPE")
		return e
	}
	hourStart(t, 40*time.Second)
	for i, auth := range []string{sentinelPass, "watcher:watch-pass"} {
		p := fmt.Sprint("s", i, "_")
		envoy := startService(t, "envoyproxy/ratelimit, REDIS_SENTINEL_AUTH="+auth, envoyBinary(t), env("envoy_"+p, auth))
		rl := startService(t, "rl-ratelimit, REDIS_SENTINEL_AUTH="+auth, rlBinary, env("rl_"+p, auth))
		fourHits(t, "a", envoy, rl)
		envoy.stop(t)
		rl.stop(t)
	}
	refused(t, "a wrong REDIS_SENTINEL_AUTH", env("rl_", "wrong"), "REDIS_URL="+master+","+sentinel.addr(),
		"WRONGPASS", "the sentinels refused REDIS_SENTINEL_AUTH")

	rl := startService(t, "rl-ratelimit", rlBinary, env("rl_", sentinelPass))
	for left := uint32(2); left >= 1; left-- {
		wantCodes(t, rl.ask(t, rq("transport", 0, d("user", "f"))), pb.RateLimitResponse_OK, left)
	}
	if n, err := primary.client.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000: %v %v: the replica did not acknowledge", n, err)
	}
	// The sentinel fails over only to a replica it has seen healthy.
	within(t, 15*time.Second, "the sentinel promoting the replica", func() bool {
		return sc.Failover(ctx, master).Err() == nil
	})
	began := time.Now()
	within(t, 15*time.Second, "the sentinel naming the replica primary", func() bool {
		addr, _ := sc.GetMasterAddrByName(ctx, master).Result()
		return len(addr) == 2 && addr[1] == strconv.Itoa(replica.port)
	})
	// Fresh values until one is answered and counted on the new primary
	// (the old one stays writable until the sentinel turns it into a
	// replica: an answer alone does not say which counted it).
	probe := 0
	within(t, 15*time.Second, "rl-ratelimit answering from the new primary", func() bool {
		probe++
		c, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if _, err := rl.client.ShouldRateLimit(c, rq("transport", 0, d("user", fmt.Sprint("probe", probe)))); err != nil {
			return false
		}
		keys, _ := replica.client.Keys(ctx, fmt.Sprintf("rl_transport_user_probe%d_*", probe)).Result()
		return len(keys) == 1
	})
	t.Logf("served by the new primary %v after the sentinel named it", time.Since(began).Round(time.Millisecond))
	wantCodes(t, rl.ask(t, rq("transport", 0, d("user", "f"))), pb.RateLimitResponse_OK, 0)
	wantCodes(t, rl.ask(t, rq("transport", 0, d("user", "f"))), pb.RateLimitResponse_OVER_LIMIT, 0)
}

// TestRedisTLS: REDIS_TLS=true to a Redis 7.0 listening on TLS only
// (--tls-port, --port 0) that requires a client certificate:
// REDIS_TLS_CACERT and REDIS_TLS_CLIENT_CERT/KEY, both services answering
// alike; REDIS_TLS_SKIP_HOSTNAME_VERIFICATION to a server whose
// certificate names another host, which still checks the CA. Each wrong
// setting stops rl-ratelimit's start with what failed.
func TestRedisTLS(t *testing.T) {
	ca, other := newCA(t, "rl test CA"), newCA(t, "another CA")
	client := ca.issue(t, "client", "rl-ratelimit", nil, nil)
	// name is the host the test's own client expects the certificate to
	// name (the server listens on 127.0.0.1 whatever it names).
	tlsServer := func(cert leaf, name string) *server {
		c := ca.clientTLS(client)
		c.ServerName = name
		return startServer(t, serverOpts{module: true, tls: c,
			extra: []string{"--tls-cert-file", cert.cert, "--tls-key-file", cert.key, "--tls-ca-cert-file", ca.pem}})
	}
	srv := tlsServer(ca.issue(t, "redis", "redis", loopback, nil), "127.0.0.1")
	misnamed := tlsServer(ca.issue(t, "misnamed", "redis.test", nil, []string{"redis.test"}), "redis.test")
	rt := newRuntime(t, transportConfig)
	env := func(srv *server, prefix string, kv ...string) map[string]string {
		e := baseEnv(srv.addr(), rt, prefix)
		e["REDIS_TLS"], e["REDIS_TLS_CACERT"] = "true", ca.pem
		e["REDIS_TLS_CLIENT_CERT"], e["REDIS_TLS_CLIENT_KEY"] = client.cert, client.key
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(e, kv[i])
			} else {
				e[kv[i]] = kv[i+1]
			}
		}
		return e
	}
	hourStart(t, 20*time.Second)
	fourHits(t, "a", startService(t, "envoyproxy/ratelimit", envoyBinary(t), env(srv, "envoy_")),
		startService(t, "rl-ratelimit", rlBinary, env(srv, "rl_")))
	skip := []string{"REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", "true"}
	fourHits(t, "b", startService(t, "envoyproxy/ratelimit, skipping the name", envoyBinary(t), env(misnamed, "envoy_", skip...)),
		startService(t, "rl-ratelimit, skipping the name", rlBinary, env(misnamed, "rl_", skip...)))

	// Each wrong setting: the server, what the TLS library saw, and the
	// setting to look at.
	refused(t, "REDIS_TLS_CACERT naming a CA that did not sign the server's certificate",
		env(srv, "rl_", "REDIS_TLS_CACERT", other.pem), "REDIS_URL="+srv.addr(), "certificate signed by unknown authority",
		"not signed by REDIS_TLS_CACERT="+other.pem)
	refused(t, "no REDIS_TLS_CACERT (the system's roots)", env(srv, "rl_", "REDIS_TLS_CACERT", ""),
		"certificate signed by unknown authority", "set REDIS_TLS_CACERT")
	refused(t, "a server certificate for another name", env(misnamed, "rl_"),
		"REDIS_URL="+misnamed.addr(), "doesn't contain any IP SANs", "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true")
	refused(t, "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION with the wrong CA",
		env(misnamed, "rl_", append(skip, "REDIS_TLS_CACERT", other.pem)...), "certificate signed by unknown authority",
		"REDIS_TLS_CACERT="+other.pem)
	refused(t, "no client certificate where the server requires one",
		env(srv, "rl_", "REDIS_TLS_CLIENT_CERT", "", "REDIS_TLS_CLIENT_KEY", ""), "REDIS_URL="+srv.addr(),
		"certificate required", "REDIS_TLS_CLIENT_CERT")
	refused(t, "plain TCP to a TLS port", env(srv, "rl_", "REDIS_TLS", ""), "REDIS_URL="+srv.addr(), "REDIS_TLS=true")
	plain := startServer(t, serverOpts{module: true})
	refused(t, "TLS to a port without TLS", env(plain, "rl_", "REDIS_TIMEOUT", "500ms"), "REDIS_URL="+plain.addr(),
		"REDIS_TLS=true to a port without TLS")
	refused(t, "a REDIS_TLS_CACERT that does not exist", env(srv, "rl_", "REDIS_TLS_CACERT", ca.pem+".missing"),
		"REDIS_TLS_CACERT", "no such file")
}

// handshake opens a TLS connection to addr as a client showing cert and
// returns the common name of the certificate the server showed.
func handshake(ca *testCA, addr string, cert leaf) (string, error) {
	cfg := ca.clientTLS(cert)
	cfg.NextProtos = []string{"h2"}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
}

// TestGrpcTLS: GRPC_SERVER_USE_TLS with GRPC_SERVER_TLS_CERT/KEY and
// GRPC_CLIENT_TLS_CACERT: mutual TLS, both services answering a client
// with a certificate from that CA alike, and refusing one without a
// certificate, with one from another CA, and in plain text. A certificate
// replaced on disk is served to new connections without a restart. Without
// GRPC_CLIENT_TLS_CACERT, TLS without client certificates.
func TestGrpcTLS(t *testing.T) {
	ca, other := newCA(t, "rl test CA"), newCA(t, "another CA")
	serverCert := ca.issue(t, "grpc", "rl-ratelimit 1", loopback, nil)
	client, stranger := ca.issue(t, "client", "envoy", nil, nil), other.issue(t, "stranger", "envoy", nil, nil)
	srv := startServer(t, serverOpts{module: true})
	rt := newRuntime(t, transportConfig)
	env := func(prefix string) map[string]string {
		e := baseEnv(srv.addr(), rt, prefix)
		e["GRPC_SERVER_USE_TLS"], e["GRPC_SERVER_TLS_CERT"], e["GRPC_SERVER_TLS_KEY"] = "true", serverCert.cert, serverCert.key
		e["GRPC_CLIENT_TLS_CACERT"] = ca.pem
		return e
	}
	hourStart(t, 30*time.Second)
	envoy := startService(t, "envoyproxy/ratelimit", envoyBinary(t), env("envoy_"))
	rl := startService(t, "rl-ratelimit", rlBinary, env("rl_"))
	for _, s := range []*service{envoy, rl} {
		if err := s.dial(credentials.NewTLS(ca.clientTLS(client))); err != nil {
			t.Fatal(err)
		}
	}
	fourHits(t, "a", envoy, rl)

	ctx := context.Background()
	for what, creds := range map[string]credentials.TransportCredentials{
		"a client without a certificate":       credentials.NewTLS(ca.clientTLS()),
		"a client certificate from another CA": credentials.NewTLS(ca.clientTLS(stranger)),
		"plain text":                           insecure.NewCredentials(),
	} {
		for _, s := range []*service{envoy, rl} {
			wantRefused(t, s, creds, what)
		}
	}
	if keys, _ := srv.client.Keys(ctx, "*refused*").Result(); len(keys) != 0 {
		t.Errorf("refused clients were counted: %v", keys)
	}

	// A renewed certificate (the same files rewritten, key first), served
	// to new connections by both services.
	ca.issue(t, "grpc", "rl-ratelimit 2", loopback, nil)
	for _, s := range []*service{envoy, rl} {
		within(t, 10*time.Second, s.name+" serving the renewed certificate", func() bool {
			cn, err := handshake(ca, s.grpc, client)
			return err == nil && cn == "rl-ratelimit 2"
		})
		wantCodes(t, s.ask(t, rq("transport", 0, d("user", "renewed"))), pb.RateLimitResponse_OK, 2)
	}

	// GRPC_CLIENT_TLS_SAN: only a client certificate naming it (a DNS
	// SAN) is served, by both services; it needs the client CA.
	named := ca.issue(t, "named", "envoy", nil, []string{"envoy.mesh.internal"})
	sanEnv := func(prefix string) map[string]string {
		e := env(prefix)
		e["GRPC_CLIENT_TLS_SAN"] = "envoy.mesh.internal"
		return e
	}
	for _, s := range []*service{
		startService(t, "envoyproxy/ratelimit, GRPC_CLIENT_TLS_SAN", envoyBinary(t), sanEnv("envoy_san_")),
		startService(t, "rl-ratelimit, GRPC_CLIENT_TLS_SAN", rlBinary, sanEnv("rl_san_")),
	} {
		if err := s.dial(credentials.NewTLS(ca.clientTLS(named))); err != nil {
			t.Fatal(err)
		}
		wantCodes(t, s.ask(t, rq("transport", 0, d("user", "named"))), pb.RateLimitResponse_OK, 2)
		wantRefused(t, s, credentials.NewTLS(ca.clientTLS(client)), "a client certificate without the SAN")
	}
	noCA := sanEnv("rl_")
	delete(noCA, "GRPC_CLIENT_TLS_CACERT")
	refused(t, "GRPC_CLIENT_TLS_SAN without GRPC_CLIENT_TLS_CACERT", noCA, "GRPC_CLIENT_TLS_SAN needs GRPC_CLIENT_TLS_CACERT")

	// Without GRPC_CLIENT_TLS_CACERT: TLS, no client certificate asked.
	e := env("rl_")
	delete(e, "GRPC_CLIENT_TLS_CACERT")
	serverOnly := startService(t, "rl-ratelimit, TLS without client certificates", rlBinary, e)
	if err := serverOnly.dial(credentials.NewTLS(ca.clientTLS())); err != nil {
		t.Fatal(err)
	}
	wantCodes(t, serverOnly.ask(t, rq("transport", 0, d("user", "c"))), pb.RateLimitResponse_OK, 2)

	e["GRPC_SERVER_TLS_KEY"] = client.key
	refused(t, "GRPC_SERVER_TLS_KEY not the certificate's", e, "GRPC_SERVER_TLS_CERT/GRPC_SERVER_TLS_KEY")
	delete(e, "GRPC_SERVER_TLS_KEY")
	refused(t, "GRPC_SERVER_USE_TLS without a key", e, "GRPC_SERVER_TLS_KEY")
}

// wantRefused: a request to s over creds fails with Unavailable (the
// handshake refused), its descriptor user=refused never counted.
func wantRefused(t *testing.T, s *service, creds credentials.TransportCredentials, what string) {
	t.Helper()
	conn, err := grpc.NewClient(s.grpc, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pb.NewRateLimitServiceClient(conn).ShouldRateLimit(c, rq("transport", 0, d("user", "refused")))
	if status.Code(err) != codes.Unavailable {
		t.Errorf("%s, %s: %v, want Unavailable (refused)", s.name, what, err)
	}
}

// TestGrpcUDS: GRPC_UDS puts the gRPC API (RateLimitService and the
// health service) on a unix socket instead of GRPC_HOST:GRPC_PORT; both
// services answer alike on it, and nothing listens on GRPC_PORT.
func TestGrpcUDS(t *testing.T) {
	srv := startServer(t, serverOpts{module: true})
	rt := newRuntime(t, transportConfig)
	dir := t.TempDir()
	var svcs []*service
	for _, s := range []struct{ name, bin, prefix string }{
		{"envoyproxy/ratelimit", envoyBinary(t), "envoy_"}, {"rl-ratelimit", rlBinary, "rl_"},
	} {
		e := baseEnv(srv.addr(), rt, s.prefix)
		grpcPort := freePort(t)
		e["GRPC_UDS"], e["GRPC_PORT"] = filepath.Join(dir, s.prefix+"grpc.sock"), strconv.Itoa(grpcPort)
		svc := startService(t, s.name, s.bin, e)
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(grpcPort), time.Second); err == nil {
			c.Close()
			t.Errorf("%s with GRPC_UDS still listens on GRPC_PORT", s.name)
		}
		svcs = append(svcs, svc)
	}
	hourStart(t, 10*time.Second)
	fourHits(t, "a", svcs...)
	rl := svcs[1]
	h, err := healthpb.NewHealthClient(rl.conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "ratelimit"})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("the health check on %s: %v %v", rl.grpc, h, err)
	}
	rl.stop(t)
	if _, err := os.Stat(strings.TrimPrefix(rl.grpc, "unix:")); !os.IsNotExist(err) {
		t.Errorf("the socket is left behind after SIGTERM: %v", err)
	}
}
