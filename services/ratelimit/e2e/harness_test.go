// Package e2e runs rl-ratelimit, and envoyproxy/ratelimit built from its
// Go module, against real servers started here on free loopback ports,
// and compares what they answer.
package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// root is the repository's root.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

var rlBinary string // built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rl-ratelimit-bin-")
	if err != nil {
		panic(err)
	}
	rlBinary = filepath.Join(dir, "rl-ratelimit")
	build := exec.Command("go", "build", "-o", rlBinary, "./cmd/rl-ratelimit")
	build.Dir = filepath.Join(root(), "services", "ratelimit")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/rl-ratelimit: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// envoyBinary is envoyproxy/ratelimit's service_cmd, which tests/run
// installs from the Go module proxy at the pinned version.
func envoyBinary(t *testing.T) string {
	p := os.Getenv("RL_ENVOY_RATELIMIT")
	if p == "" {
		t.Fatal("RL_ENVOY_RATELIMIT is not set: run services/ratelimit/tests/run, which builds envoyproxy/ratelimit at the pinned version")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("envoyproxy/ratelimit not found at RL_ENVOY_RATELIMIT=%s", p)
	}
	return p
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// server is a Redis or Valkey process.
type server struct {
	port   int
	dir    string
	cmd    *exec.Cmd
	client *redis.Client
	opts   serverOpts
}

type serverOpts struct {
	valkey   bool // Valkey 9.1 instead of Redis 7.0
	module   bool // load librl.so
	library  bool // FUNCTION LOAD functions/rl.lua
	extra    []string
	port     int    // 0: a free one
	password string // requirepass
	conf     string // a configuration file, the first argument (a sentinel needs one)
	// tls makes the port a TLS port (--tls-port, --port 0; the
	// certificates go in extra); the test's own clients connect with it.
	tls *tls.Config
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func startServer(t *testing.T, o serverOpts) *server {
	t.Helper()
	s := &server{dir: t.TempDir(), opts: o}
	s.start(t)
	t.Cleanup(s.stop)
	return s
}

func (s *server) start(t *testing.T) {
	t.Helper()
	o := s.opts
	bin := "redis-server"
	if o.valkey {
		bin = filepath.Join(root(), ".deps/valkey/valkey-server")
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("%s not found: run make deps", bin)
	}
	module := filepath.Join(root(), "target/release/librl.so")
	if o.valkey {
		module = filepath.Join(root(), "target/valkey/release/librl.so")
	}
	for try := 0; ; try++ {
		port := o.port
		if port == 0 {
			port = freePort(t)
		}
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", s.dir,
			"--save", "", "--appendonly", "no", "--logfile", filepath.Join(s.dir, "server.log")}
		if o.tls != nil {
			args = append([]string{"--port", "0", "--tls-port", strconv.Itoa(port)}, args[2:]...)
		}
		if o.conf != "" {
			args = append([]string{o.conf}, args...)
		}
		if o.module {
			if _, err := os.Stat(module); err != nil {
				t.Fatalf("the module is not at %s: run make build build-valkey", module)
			}
			args = append(args, "--loadmodule", module)
		}
		if o.password != "" {
			args = append(args, "--requirepass", o.password)
		}
		s.cmd = exec.Command(bin, append(args, o.extra...)...)
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.port = port
		if s.ready() {
			break
		}
		s.kill()
		if try == 4 {
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			t.Fatalf("%s did not start:\n%s", bin, log)
		}
	}
	s.client = redis.NewClient(&redis.Options{Addr: s.addr(), Password: o.password, TLSConfig: o.tls})
	if o.library {
		lib, err := os.ReadFile(filepath.Join(root(), "functions/rl.lua"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.client.FunctionLoadReplace(context.Background(), string(lib)).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *server) ready() bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c := redis.NewClient(&redis.Options{Addr: s.addr(), Password: s.opts.password, TLSConfig: s.opts.tls, MaxRetries: -1})
		err := c.Ping(context.Background()).Err()
		c.Close()
		if err == nil {
			return true
		}
		if s.cmd.ProcessState != nil {
			return false
		}
	}
	return false
}

func (s *server) kill() {
	if s.client != nil {
		s.client.Close()
		s.client = nil
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

func (s *server) stop() { s.kill() }

// runtimeDir is envoyproxy/ratelimit's runtime folder with one
// configuration file, config/config.yaml.
type runtimeDir struct{ root string }

func newRuntime(t *testing.T, yaml string) *runtimeDir {
	r := &runtimeDir{root: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(r.root, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write(t, "config.yaml", yaml)
	return r
}

// write replaces a file atomically (as a deployment would).
func (r *runtimeDir) write(t *testing.T, name, text string) {
	p := filepath.Join(r.root, "config", name)
	if err := os.WriteFile(p+".tmp", []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
}

// service is a running rl-ratelimit or envoyproxy/ratelimit.
type service struct {
	name     string
	cmd      *exec.Cmd
	http     string
	debug    string
	grpc     string // the gRPC target: 127.0.0.1:port, or unix:path with GRPC_UDS
	conn     *grpc.ClientConn
	client   pb.RateLimitServiceClient
	log      *strings.Builder
	exited   chan struct{}
	exitCode int
}

// baseEnv is what both services are given: the server, the runtime
// folder, loopback ports, and the headers on.
func baseEnv(srv string, rt *runtimeDir, prefix string) map[string]string {
	return map[string]string{
		"REDIS_SOCKET_TYPE": "tcp", "REDIS_URL": srv, "REDIS_TYPE": "SINGLE",
		"RUNTIME_ROOT": rt.root, "RUNTIME_SUBDIRECTORY": "", "RUNTIME_WATCH_ROOT": "false",
		"USE_STATSD": "false", "LOG_LEVEL": "warn", "CACHE_KEY_PREFIX": prefix,
		"LIMIT_RESPONSE_HEADERS_ENABLED": "true", "HOST": "127.0.0.1", "GRPC_HOST": "127.0.0.1", "DEBUG_HOST": "127.0.0.1",
	}
}

// startService runs bin with env (plus free ports) and waits for its
// health check; a process that exits first fails the test with its log.
func startService(t *testing.T, name, bin string, env map[string]string) *service {
	t.Helper()
	s, err := launch(t, name, bin, env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func launch(t *testing.T, name, bin string, env map[string]string) (*service, error) {
	ports := map[string]int{"PORT": freePort(t), "GRPC_PORT": freePort(t), "DEBUG_PORT": freePort(t)}
	s := &service{name: name, log: &strings.Builder{}, exited: make(chan struct{})}
	s.http = "http://127.0.0.1:" + strconv.Itoa(ports["PORT"])
	s.debug = "http://127.0.0.1:" + strconv.Itoa(ports["DEBUG_PORT"])
	s.grpc = "127.0.0.1:" + strconv.Itoa(ports["GRPC_PORT"])
	if uds := env["GRPC_UDS"]; uds != "" {
		s.grpc = "unix:" + uds
	}
	s.cmd = exec.Command(bin)
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	for k, v := range ports {
		if _, set := env[k]; !set {
			s.cmd.Env = append(s.cmd.Env, k+"="+strconv.Itoa(v))
		}
	}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = s.cmd.Wait()
		s.exitCode = s.cmd.ProcessState.ExitCode()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-s.exited:
			return s, fmt.Errorf("%s exited (%d) before it was healthy:\n%s", name, s.exitCode, s.log)
		default:
		}
		resp, err := http.Get(s.http + "/healthcheck")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("%s not healthy within 30 s:\n%s", name, s.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s, s.dial(insecure.NewCredentials())
}

// dial connects the test's gRPC client to the service with creds
// (replacing the connection it had).
func (s *service) dial(creds credentials.TransportCredentials) error {
	if s.conn != nil {
		s.conn.Close()
	}
	conn, err := grpc.NewClient(s.grpc, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	s.conn, s.client = conn, pb.NewRateLimitServiceClient(conn)
	return nil
}

// stop sends SIGTERM and waits (killing after 10 s).
func (s *service) stop(t *testing.T) {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("%s did not stop within 10 s of SIGTERM", s.name)
	}
}

func (s *service) ask(t *testing.T, req *pb.RateLimitRequest) *pb.RateLimitResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := s.client.ShouldRateLimit(ctx, req)
	if err != nil {
		t.Fatalf("%s: ShouldRateLimit(%v): %v", s.name, req, err)
	}
	return resp
}

// runExit runs bin with env and returns its exit code and output (for
// settings refused at start).
func runExit(t *testing.T, bin string, env map[string]string) (int, string) {
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	done := make(chan struct{})
	var out []byte
	go func() { out, _ = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return -1, string(out)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}
