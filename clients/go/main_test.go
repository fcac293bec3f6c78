package rl_test

import (
	"fmt"
	"os"
	"testing"

	"rl.invalid/rl/internal/servertest"
)

// The servers this package's tests share: Valkey 9.1 with the module and
// Valkey 9.1 with only the library (stopped clocks: replies compare
// exactly), Redis 7.0 with the module (a running clock), and two
// three-primary clusters, Redis 7.0 with the module and Valkey 9.1 with
// only the library.
var (
	valkeyModule   *servertest.Server
	valkeyLibrary  *servertest.Server
	redis7Module   *servertest.Server
	redis7Second   *servertest.Server // a Ring's second shard
	clusterModule  *servertest.Cluster
	clusterLibrary *servertest.Cluster
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	start := func(o servertest.Options) *servertest.Server {
		if err != nil {
			return nil
		}
		var s *servertest.Server
		if s, err = servertest.Start(o); err != nil {
			return nil
		}
		return s
	}
	valkeyModule = start(servertest.Options{Flavor: servertest.Valkey9, Module: true, Stopped: true})
	valkeyLibrary = start(servertest.Options{Flavor: servertest.Valkey9, Library: true, Stopped: true})
	redis7Module = start(servertest.Options{Flavor: servertest.Redis7, Module: true})
	redis7Second = start(servertest.Options{Flavor: servertest.Redis7, Module: true})
	if err == nil {
		clusterModule, err = servertest.StartCluster(servertest.Redis7, true, false)
	}
	if err == nil {
		clusterLibrary, err = servertest.StartCluster(servertest.Valkey9, false, true)
	}
	defer func() {
		for _, s := range []*servertest.Server{valkeyModule, valkeyLibrary, redis7Module, redis7Second} {
			if s != nil {
				s.Stop()
			}
		}
		for _, c := range []*servertest.Cluster{clusterModule, clusterLibrary} {
			if c != nil {
				c.Stop()
			}
		}
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rl tests: cannot start the servers:", err)
		return 1
	}
	return m.Run()
}
