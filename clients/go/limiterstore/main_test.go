package limiterstore_test

import (
	"fmt"
	"os"
	"testing"

	"rl.invalid/rl/internal/servertest"
)

// Shared by the package's tests: Redis 7.0 with the module (a running
// clock), Valkey 9.1 with only the library (a stopped clock).
var (
	redis7Module  *servertest.Server
	valkeyLibrary *servertest.Server
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	redis7Module, err = servertest.Start(servertest.Options{Flavor: servertest.Redis7, Module: true})
	if err == nil {
		defer redis7Module.Stop()
		valkeyLibrary, err = servertest.Start(servertest.Options{Flavor: servertest.Valkey9, Library: true, Stopped: true})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "limiterstore tests: cannot start the servers:", err)
		return 1
	}
	defer valkeyLibrary.Stop()
	return m.Run()
}
