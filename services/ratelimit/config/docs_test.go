package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsExamples loads docs/envoy.md's configuration examples: each
// YAML block starting with "domain:" as a configuration file, and the
// RL_ALGORITHMS_FILE example against it.
func TestDocsExamples(t *testing.T) {
	text, err := os.ReadFile("../../../docs/envoy.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(text), -1)
	var files []File
	var algorithms string
	for _, b := range blocks {
		switch {
		case strings.HasPrefix(b[1], "domain:"):
			files = append(files, File{Name: "config.docs.yaml", Content: b[1]})
		case strings.HasPrefix(b[1], "api.user:"):
			algorithms = b[1]
		}
	}
	if len(files) != 1 || algorithms == "" {
		t.Fatalf("found %d configuration examples and algorithms %q in docs/envoy.md", len(files), algorithms)
	}
	c, err := Load(files, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rl, _ := c.Lookup("api", desc("upload", "x")); rl == nil || rl.Algorithm != GCRA || rl.Burst != 20 {
		t.Fatalf("upload: %+v", rl)
	}
	// The algorithms file names limits of its own example configuration.
	choices, err := ParseAlgorithms("algorithms.yaml", algorithms)
	if err != nil {
		t.Fatal(err)
	}
	plain := "domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 100}\n" +
		"  - key: upload\n    rate_limit: {unit: second, requests_per_unit: 10}\n" +
		"  - key: org\n    value: acme\n    descriptors:\n      - key: team\n        rate_limit: {unit: hour, requests_per_unit: 50}\n"
	if _, err := Load([]File{{Name: "config.plain.yaml", Content: plain}}, false, choices); err != nil {
		t.Fatal(err)
	}
}
