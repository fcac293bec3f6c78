package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	rlpb "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rl.invalid/rl-ratelimit/limiter"
)

const opsConfig = `
domain: ops
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: slide
    rate_limit: {unit: minute, requests_per_unit: 3, algorithm: sliding}
`

// TestCluster: a three-node Cluster, one request's twelve descriptors
// spread over every node; each slot's descriptors go in one RL.ALL, the
// nodes in one pipelined round trip each. Every limit holds exactly.
func TestCluster(t *testing.T) {
	var nodes []*server
	var addrs []string
	for i := 0; i < 3; i++ {
		bus := freePort(t)
		n := startServer(t, serverOpts{module: true, extra: []string{"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-port", strconv.Itoa(bus)}})
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr())
	}
	out, err := exec.Command("redis-cli", append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, n := range nodes {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			info, _ := n.client.ClusterInfo(context.Background()).Result()
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the cluster did not reach cluster_state:ok")
			}
		}
	}
	env := baseEnv(strings.Join(addrs, ","), newRuntime(t, opsConfig), "")
	env["REDIS_TYPE"] = "CLUSTER"
	// REDIS_SOCKET_TYPE at its default, unix, which a Cluster ignores (as
	// envoyproxy/ratelimit does): its nodes are host:port.
	delete(env, "REDIS_SOCKET_TYPE")
	rl := startService(t, "rl-ratelimit", rlBinary, env)
	var ds []*rlpb.RateLimitDescriptor
	for i := 0; i < 6; i++ {
		ds = append(ds, d("user", fmt.Sprint("u", i)), d("slide", fmt.Sprint("s", i)))
	}
	minuteStart(t, 5*time.Second)
	for round := 0; round < 3; round++ {
		wantCodes(t, rl.ask(t, rq("ops", 0, ds...)), pb.RateLimitResponse_OK,
			uint32(2-round), uint32(2-round), uint32(2-round))
	}
	r := rl.ask(t, rq("ops", 0, ds...))
	if r.OverallCode != pb.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("the fourth request: %v", r)
	}
	for i, st := range r.Statuses {
		if st.Code != pb.RateLimitResponse_OVER_LIMIT {
			t.Fatalf("descriptor %d over its limit answered %v", i, st)
		}
	}
	// Every node holds some of the keys.
	slots := map[string]bool{}
	for _, n := range nodes {
		size, _ := n.client.DBSize(context.Background()).Result()
		if size == 0 {
			t.Errorf("node %s holds none of the 12 keys", n.addr())
		}
		keys, _ := n.client.Keys(context.Background(), "*").Result()
		for _, k := range keys {
			slots[fmt.Sprint(limiter.Slot(k))] = true
		}
	}
	if len(slots) < 6 {
		t.Errorf("the keys fell in %d slots; the test wants them spread", len(slots))
	}
}

// TestConfigReload: a new file is served within a few seconds; a
// malformed one is refused, counted, and the previous one keeps serving.
func TestConfigReload(t *testing.T) {
	srv := startServer(t, serverOpts{module: true})
	rt := newRuntime(t, opsConfig)
	rl := startService(t, "rl-ratelimit", rlBinary, baseEnv(srv.addr(), rt, ""))
	minuteStart(t, 15*time.Second)
	wantCodes(t, rl.ask(t, rq("ops", 0, d("user", "a"))), pb.RateLimitResponse_OK, 2)
	rt.write(t, "config.yaml", strings.Replace(opsConfig, "requests_per_unit: 3}\n  - key: slide", "requests_per_unit: 10}\n  - key: slide", 1))
	waitFor(t, "the new limit", func() bool {
		return rl.ask(t, rq("ops", 0, d("user", "b"))).Statuses[0].CurrentLimit.GetRequestsPerUnit() == 10
	})
	for _, bad := range []string{"domain: ops\ndescriptors:\n  - key: user\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n",
		"domain: ops\n  descriptors: [\n", "domain: ops\ndescriptors:\n  - key: user\n    colour: blue\n"} {
		before := metric(t, rl, "ratelimit_service_config_load_error")
		rt.write(t, "config.yaml", bad)
		waitFor(t, "the load error counted", func() bool { return metric(t, rl, "ratelimit_service_config_load_error") > before })
		if got := rl.ask(t, rq("ops", 0, d("user", "c"))).Statuses[0].CurrentLimit.GetRequestsPerUnit(); got != 10 {
			t.Fatalf("after a malformed file the limit is %d, want the previous 10", got)
		}
	}
	if !strings.Contains(rl.log.String(), "invalid rate limit unit 'fortnight'") {
		t.Errorf("the log does not name the error:\n%s", rl.log)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// metric reads one series from /metrics (0 if absent).
func metric(t *testing.T, s *service, series string) uint64 {
	t.Helper()
	resp, err := http.Get(s.debug + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if name, v, ok := strings.Cut(line, " "); ok && name == series {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}

// TestServerRestartMidTraffic: the server stops mid-traffic (requests get
// an error, the service stays up), comes back on the same port as a
// Valkey with the function library instead of the module, and the
// service finds the new edition and answers again.
func TestServerRestartMidTraffic(t *testing.T) {
	port := freePort(t)
	srv := startServer(t, serverOpts{module: true, port: port})
	rl := startService(t, "rl-ratelimit", rlBinary, baseEnv(srv.addr(), newRuntime(t, opsConfig), ""))
	ctx := context.Background()
	ask := func() error {
		c, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err := rl.client.ShouldRateLimit(c, rq("ops", 0, d("slide", "x"), d("user", "x")))
		return err
	}
	for i := 0; i < 3; i++ {
		if err := ask(); err != nil {
			t.Fatal(err)
		}
	}
	srv.kill()
	began := time.Now()
	err := ask()
	t.Logf("with the server down, answered in %v: %v", time.Since(began), err)
	if st := status.Convert(err); st.Code() != codes.Unavailable {
		t.Fatalf("with the server down: %v, want Unavailable", err)
	}
	srv.opts = serverOpts{valkey: true, library: true, port: port}
	srv.start(t)
	waitFor(t, "answers from the function library", func() bool { return ask() == nil })
	r := rl.ask(t, rq("ops", 0, d("slide", "y")))
	wantCodes(t, r, pb.RateLimitResponse_OK, 2)
	if n, _ := srv.client.Exists(ctx, "ops_slide_y_slide60").Result(); n != 1 {
		t.Fatal("the function library wrote no sliding log")
	}
	if !strings.Contains(rl.log.String(), "edition changed") {
		t.Errorf("the log does not say the edition changed:\n%s", rl.log)
	}
}

// TestSettingsRefused: settings rl-ratelimit cannot honour stop it at
// start, naming the variable; so does a malformed configuration.
func TestSettingsRefused(t *testing.T) {
	srv := startServer(t, serverOpts{module: true})
	rt := newRuntime(t, opsConfig)
	for name, value := range map[string]string{
		"BACKEND_TYPE": "memcache", "LOCAL_CACHE_SIZE_IN_BYTES": "1048576", "USE_STATSD": "true",
		"REDIS_PERSECOND": "true", "CONFIG_TYPE": "GRPC_XDS_SOTW", "QUOTA_MODE": "true", "REDIS_TYPE": "RING",
	} {
		env := baseEnv(srv.addr(), rt, "")
		env[name] = value
		code, out := runExit(t, rlBinary, env)
		if code == 0 || !strings.Contains(out, name) {
			t.Errorf("%s=%s: exit %d, output %q; want a failure naming %s", name, value, code, out, name)
		}
	}
	bad := newRuntime(t, "domain: ops\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 5, algorithm: leaky}\n")
	code, out := runExit(t, rlBinary, baseEnv(srv.addr(), bad, ""))
	if code == 0 || !strings.Contains(out, "unknown algorithm 'leaky'") || !strings.Contains(out, "config.config.yaml") {
		t.Errorf("a malformed config: exit %d, output %q", code, out)
	}
	share := newRuntime(t, "domain: ops\ndescriptors:\n  - key: user\n    value: a*\n    share_threshold: true\n    rate_limit: {unit: minute, requests_per_unit: 5}\n")
	if code, out := runExit(t, rlBinary, baseEnv(srv.addr(), share, "")); code == 0 || !strings.Contains(out, "share_threshold") {
		t.Errorf("share_threshold: exit %d, output %q", code, out)
	}
}

// TestRedisAuth: REDIS_AUTH as a password and as user:password (an ACL
// user granted rl's commands by name, as on Redis 7.0); a wrong one stops the start,
// naming REDIS_URL without the secret.
func TestRedisAuth(t *testing.T) {
	srv := startServer(t, serverOpts{module: true, password: "s3cret"})
	ctx := context.Background()
	if err := srv.client.Do(ctx, "ACL", "SETUSER", "envoy", "on", ">envpass", "+rl.fixed", "+rl.all", "+rl.peek", "+rl.slide", "+ping", "+hello", "~*").Err(); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, opsConfig)
	for _, auth := range []string{"s3cret", "envoy:envpass"} {
		env := baseEnv(srv.addr(), rt, "")
		env["REDIS_AUTH"] = auth
		rl := startService(t, "rl-ratelimit "+auth, rlBinary, env)
		wantCodes(t, rl.ask(t, rq("ops", 0, d("user", auth))), pb.RateLimitResponse_OK, 2)
		rl.stop(t)
	}
	env := baseEnv(srv.addr(), rt, "")
	env["REDIS_AUTH"] = "wrong"
	code, out := runExit(t, rlBinary, env)
	if code == 0 || !strings.Contains(out, "REDIS_URL="+srv.addr()) || strings.Contains(out, "wrong") {
		t.Errorf("a wrong REDIS_AUTH: exit %d, output %q", code, out)
	}
}

// TestMetricsAndShutdown: the per-limit counters carry envoyproxy/
// ratelimit's names and labels; SIGTERM stops the service cleanly (exit 0).
func TestMetricsAndShutdown(t *testing.T) {
	srv := startServer(t, serverOpts{module: true})
	rl := startService(t, "rl-ratelimit", rlBinary, baseEnv(srv.addr(), newRuntime(t, opsConfig), ""))
	minuteStart(t, 5*time.Second)
	for i := 0; i < 5; i++ {
		rl.ask(t, rq("ops", 0, d("user", "m")))
	}
	for series, want := range map[string]uint64{
		`ratelimit_service_rate_limit_total_hits{domain="ops",key1="user"}`:   5,
		`ratelimit_service_rate_limit_within_limit{domain="ops",key1="user"}`: 3,
		`ratelimit_service_rate_limit_over_limit{domain="ops",key1="user"}`:   2,
		`ratelimit_service_rate_limit_near_limit{domain="ops",key1="user"}`:   1,
		`ratelimit_service_config_load_success`:                               1,
	} {
		if got := metric(t, rl, series); got != want {
			t.Errorf("%s = %d, want %d", series, got, want)
		}
	}
	rl.stop(t)
	if rl.exitCode != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", rl.exitCode, rl.log)
	}
}
