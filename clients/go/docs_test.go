package rl_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"rl.invalid/rl"
	"rl.invalid/rl/internal/servertest"
)

type goBlock struct {
	line   int
	code   string
	prints string // the `docs-test: prints` block after it, if any
}

var fence = regexp.MustCompile("(?ms)^(<!-- docs-test: ([^>]*)-->\n)?```(\\w*)\n(.*?)^```$")

// blocks are the fenced blocks of text from marker on (to the next "\n## "
// when untilNext): their info string, directive and text.
func blocks(t *testing.T, file, marker string, untilNext bool) (section string, start int) {
	b, err := os.ReadFile(filepath.Join(servertest.Root(), file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("%s has no %q", file, marker)
	}
	section = text[i:]
	if untilNext {
		if j := strings.Index(section[len(marker):], "\n## "); j >= 0 {
			section = section[:len(marker)+j]
		}
	}
	return section, strings.Count(text[:i], "\n") + 1
}

func goBlocks(section string, start int) (programs []goBlock, shell []string) {
	matches := fence.FindAllStringSubmatchIndex(section, -1)
	for i, m := range matches {
		directive, info, code := "", section[m[6]:m[7]], section[m[8]:m[9]]
		if m[4] >= 0 {
			directive = section[m[4]:m[5]]
		}
		line := start + strings.Count(section[:m[0]], "\n")
		switch {
		case info == "go":
			blk := goBlock{line: line, code: code}
			if i+1 < len(matches) && matches[i+1][4] >= 0 &&
				strings.TrimSpace(section[matches[i+1][4]:matches[i+1][5]]) == "prints" {
				blk.prints = section[matches[i+1][8]:matches[i+1][9]]
			}
			programs = append(programs, blk)
		case info == "" && strings.Contains(directive, "clients/go/docs_test.go"):
			for _, l := range strings.Split(code, "\n") {
				if strings.HasPrefix(l, "$ ") {
					shell = append(shell, strings.TrimPrefix(l, "$ "))
				}
			}
		}
	}
	return programs, shell
}

// TestDocsSnippets: docs/clients.md's Go section, as a user reads it. Its
// install lines run in a new module, with the release archive that
// scripts/dist writes; then every Go program in the section is built in
// that module and run against Valkey 9.1 with the module (clock stopped),
// its output compared with the block the docs show after it. The Go lines
// of the README and of the package's own README (shipped in the archive)
// must be lines of those programs, and the package README's install lines
// the ones run here.
func TestDocsSnippets(t *testing.T) {
	section, start := blocks(t, "docs/clients.md", "<!-- go section below -->", false)
	programs, shell := goBlocks(section, start)
	if len(programs) < 3 || len(shell) != 3 {
		t.Fatalf("found %d Go programs and %d install lines in docs/clients.md's Go section", len(programs), len(shell))
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "mod", "init", "example.invalid/app")
	archive := strings.TrimSpace(run(filepath.Join(servertest.Root(), "clients/go/scripts/dist"), dir, rl.Version))
	if filepath.Base(archive) != "rl-go-"+rl.Version+".tar.gz" {
		t.Fatalf("scripts/dist wrote %s", archive)
	}
	// The documented lines name version 1.0.0; run them for this one.
	for _, line := range shell {
		line = strings.ReplaceAll(line, "1.0.0", rl.Version)
		fields := strings.Fields(line)
		run(fields[0], fields[1:]...)
	}
	srv := valkeyModule
	ctx := context.Background()
	for _, p := range programs {
		if !strings.Contains(p.code, "package main") {
			t.Errorf("docs/clients.md:%d: a Go block that is not a program", p.line)
			continue
		}
		if err := srv.Client.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := srv.SetClock(servertest.BaseTime); err != nil {
			t.Fatal(err)
		}
		code := strings.ReplaceAll(p.code, `"localhost:6379"`, `"`+srv.Addr()+`"`)
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		run("go", "mod", "tidy")
		got := run("go", "run", ".")
		if p.prints == "" {
			t.Errorf("docs/clients.md:%d: no `docs-test: prints` block after the program", p.line)
		} else if got != p.prints {
			t.Errorf("docs/clients.md:%d printed\n%s\nthe docs show\n%s", p.line, got, p.prints)
		}
	}
	readme, _ := blocks(t, "README.md", "## From your framework", true)
	linesOfPrograms(t, "README.md", readme, programs)
	pkg, _ := blocks(t, "clients/go/README.md", "# ", false)
	linesOfPrograms(t, "clients/go/README.md", pkg, programs)
	if _, pkgShell := goBlocks(pkg, 0); strings.Join(pkgShell, "\n") != strings.Join(shell, "\n") {
		t.Errorf("clients/go/README.md's install lines %q are not docs/clients.md's %q", pkgShell, shell)
	}
}

// linesOfPrograms checks that every line of the Go blocks in section (of
// file) is in one of the programs.
func linesOfPrograms(t *testing.T, file, section string, programs []goBlock) {
	t.Helper()
	lines, _ := goBlocks(section, 0)
	if len(lines) == 0 {
		t.Fatalf("%s has no Go block", file)
	}
	for _, b := range lines {
		for _, l := range strings.Split(strings.TrimSpace(b.code), "\n") {
			found := false
			for _, p := range programs {
				found = found || strings.Contains(p.code, strings.TrimSpace(l))
			}
			if !found {
				t.Errorf("%s's Go line %q is in no program of docs/clients.md", file, l)
			}
		}
	}
}
