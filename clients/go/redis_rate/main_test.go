package redis_rate_test

import (
	"fmt"
	"os"
	"testing"

	"rl.invalid/rl/internal/servertest"
)

// The servers every test of this package shares: Valkey 9.1 with the
// module and Valkey 9.1 with only the library, both with stopped clocks,
// and Redis 7.0 with the module on a running clock.
var (
	valkeyModule  *servertest.Server
	valkeyLibrary *servertest.Server
	redis7Module  *servertest.Server
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	start := func(o servertest.Options) *servertest.Server {
		if err != nil {
			return nil
		}
		var s *servertest.Server
		s, err = servertest.Start(o)
		return s
	}
	valkeyModule = start(servertest.Options{Flavor: servertest.Valkey9, Module: true, Stopped: true})
	valkeyLibrary = start(servertest.Options{Flavor: servertest.Valkey9, Library: true, Stopped: true})
	redis7Module = start(servertest.Options{Flavor: servertest.Redis7, Module: true})
	defer func() {
		for _, s := range []*servertest.Server{valkeyModule, valkeyLibrary, redis7Module} {
			if s != nil {
				s.Stop()
			}
		}
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis_rate tests: cannot start the servers:", err)
		return 1
	}
	return m.Run()
}
