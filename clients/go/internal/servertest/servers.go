// Package servertest starts real servers for the tests, on free loopback
// ports: Redis 7.0 and Valkey 9.1 with rl's module, a bare Valkey with
// the function library, a three-primary cluster, optionally under
// libfaketime with a stopped clock the test moves.
package servertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..", ".."))
}

// Flavor is a server binary.
type Flavor string

const (
	Redis7  Flavor = "redis7"
	Valkey9 Flavor = "valkey9"
)

// Binary is the flavor's server binary ($RL_REDIS7 or redis-server on
// PATH; $RL_VALKEY9 or .deps/valkey/valkey-server).
func (f Flavor) Binary() (string, error) {
	if f == Redis7 {
		if p := os.Getenv("RL_REDIS7"); p != "" {
			return p, nil
		}
		p, err := exec.LookPath("redis-server")
		if err != nil {
			return "", fmt.Errorf("redis-server (Redis 7.0) not on PATH: run make deps or set RL_REDIS7")
		}
		return p, nil
	}
	p := os.Getenv("RL_VALKEY9")
	if p == "" {
		p = filepath.Join(Root(), ".deps/valkey/valkey-server")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("valkey-server 9.1 not found at %s: run make deps or set RL_VALKEY9", p)
	}
	return p, nil
}

// Module is librl.so ($RL_MODULE or target/release/librl.so).
func Module() (string, error) {
	p := os.Getenv("RL_MODULE")
	if p == "" {
		p = filepath.Join(Root(), "target/release/librl.so")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the module is not at %s: run make build or set RL_MODULE", p)
	}
	return p, nil
}

// Library is functions/rl.lua's text.
func Library() (string, error) {
	b, err := os.ReadFile(filepath.Join(Root(), "functions/rl.lua"))
	return string(b), err
}

// BaseTime is where a stopped clock starts: 2026-12-01 12:00:00 UTC.
var BaseTime = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// Options say what a server runs.
type Options struct {
	Flavor  Flavor
	Module  bool     // --loadmodule librl.so
	Library bool     // FUNCTION LOAD functions/rl.lua
	Stopped bool     // libfaketime, the clock stopped at BaseTime (Valkey only)
	Extra   []string // more server arguments
	Port    int      // this port (a server restarted under running clients), else a free one
}

// Server is one running server.
type Server struct {
	Port   int
	Dir    string
	Client *redis.Client
	cmd    *exec.Cmd
	clock  string // the faketime file, when stopped
	now    time.Time
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts a server as opts say and waits until it answers.
func Start(opts Options) (*Server, error) {
	bin, err := opts.Flavor.Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rl-go-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	var env []string
	if opts.Stopped {
		lib := os.Getenv("RL_FAKETIME_LIB")
		if lib == "" {
			lib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
		}
		if _, err := os.Stat(lib); err != nil {
			return nil, fmt.Errorf("libfaketime not found at %s: run make deps (apt-get install faketime) or set RL_FAKETIME_LIB", lib)
		}
		s.clock = filepath.Join(dir, "faketime")
		if err := s.SetClock(BaseTime); err != nil {
			return nil, err
		}
		env = append(os.Environ(), "TZ=UTC", "LD_PRELOAD="+lib,
			"FAKETIME_TIMESTAMP_FILE="+s.clock, "FAKETIME_NO_CACHE=1")
	}
	var last string
	// A port found free can be taken before the server binds it: retry.
	for try := 0; try < 5; try++ {
		port := opts.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		log := filepath.Join(dir, fmt.Sprintf("server-%d.log", port))
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", log}
		if opts.Module {
			m, err := Module()
			if err != nil {
				return nil, err
			}
			args = append(args, "--loadmodule", m)
		}
		args = append(args, opts.Extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", bin, err)
		}
		s.Port, s.cmd = port, cmd
		if s.ready() {
			break
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		text, _ := os.ReadFile(log)
		last = string(text)
		s.cmd = nil
		if !strings.Contains(last, "Address already in use") {
			return nil, fmt.Errorf("%s did not start; its log:\n%s", bin, last)
		}
		if opts.Port != 0 {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if s.cmd == nil {
		return nil, fmt.Errorf("%s found no free port; last log:\n%s", bin, last)
	}
	// One connection: the clock tests need each call's order kept.
	s.Client = redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 4})
	if opts.Library {
		if err := LoadLibrary(context.Background(), s.Client); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// LoadLibrary loads functions/rl.lua with FUNCTION LOAD REPLACE.
func LoadLibrary(ctx context.Context, c redis.Cmdable) error {
	lib, err := Library()
	if err != nil {
		return err
	}
	return c.FunctionLoadReplace(ctx, lib).Err()
}

func (s *Server) ready() bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: time.Second})
		err := c.Ping(context.Background()).Err()
		c.Close()
		if err == nil {
			return true
		}
		if s.cmd.ProcessState != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// SetClock stops the server's clock at t (Stopped servers only).
func (s *Server) SetClock(t time.Time) error {
	if s.clock == "" {
		return fmt.Errorf("SetClock on a server whose clock runs")
	}
	s.now = t
	t = t.UTC()
	// libfaketime reads the fraction as a double: 500 ns more keeps whole
	// µs from coming out one short.
	line := fmt.Sprintf("%s.%06d500\n", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/1000)
	part := s.clock + ".part"
	if err := os.WriteFile(part, []byte(line), 0o644); err != nil {
		return err
	}
	return os.Rename(part, s.clock) // the server never reads half a file
}

// FreshAt empties the server (FLUSHALL) and stops its clock at t: where a
// test that compares answers starts from.
func (s *Server) FreshAt(ctx context.Context, t time.Time) error {
	if err := s.Client.FlushAll(ctx).Err(); err != nil {
		return err
	}
	return s.SetClock(t)
}

// Now is the stopped clock's time.
func (s *Server) Now() time.Time { return s.now }

// Advance moves the stopped clock by d.
func (s *Server) Advance(d time.Duration) error { return s.SetClock(s.now.Add(d)) }

// Restart stops the server and starts one as opts say on the same port:
// the server changes under the clients connected to its address (s.Client
// among them, kept).
func (s *Server) Restart(opts Options) error {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	os.RemoveAll(s.Dir)
	opts.Port = s.Port
	n, err := Start(opts)
	if err != nil {
		s.cmd = nil
		return err
	}
	n.Client.Close()
	s.Dir, s.cmd, s.clock, s.now = n.Dir, n.cmd, n.clock, n.now
	return nil
}

// Stop shuts the server down and removes its directory.
func (s *Server) Stop() {
	if s.Client != nil {
		s.Client.Close()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	os.RemoveAll(s.Dir)
}

// Cluster is three primaries with every slot assigned.
type Cluster struct {
	Nodes  []*Server
	Client *redis.ClusterClient
}

// StartCluster starts a three-primary cluster of flavor, each node with
// the module (module true) and the library (library true).
func StartCluster(flavor Flavor, module, library bool) (*Cluster, error) {
	c := &Cluster{}
	var addrs []string
	for i := 0; i < 3; i++ {
		bus, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := Start(Options{Flavor: flavor, Module: module, Library: library, Extra: []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", "5000"}})
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr())
	}
	out, err := exec.Command("redis-cli", append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Nodes {
		for {
			info, _ := n.Client.ClusterInfo(ctx).Result()
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				c.Stop()
				return nil, fmt.Errorf("cluster did not reach cluster_state:ok")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.Client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	return c, nil
}

// Stop stops every node.
func (c *Cluster) Stop() {
	if c.Client != nil {
		c.Client.Close()
	}
	for _, n := range c.Nodes {
		n.Stop()
	}
}
