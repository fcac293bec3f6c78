package rl_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"rl.invalid/rl"
	"rl.invalid/rl/internal/servertest"
)

// TestVersionIsCargos: the Go module's Version is the release's, as
// Cargo.toml declares it.
func TestVersionIsCargos(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(servertest.Root(), "Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version = "([^"]+)"`).FindSubmatch(manifest)
	if m == nil {
		t.Fatal("Cargo.toml has no version line")
	}
	if string(m[1]) != rl.Version {
		t.Fatalf("rl.Version is %q, Cargo.toml's version %q", rl.Version, m[1])
	}
}
