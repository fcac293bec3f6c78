package config

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Source is where the configuration lives: envoyproxy/ratelimit's runtime
// folder settings, read the same way.
type Source struct {
	RuntimePath     string // RUNTIME_ROOT
	Subdirectory    string // RUNTIME_SUBDIRECTORY
	AppDirectory    string // RUNTIME_APPDIRECTORY
	IgnoreDotFiles  bool   // RUNTIME_IGNOREDOTFILES
	MergeDomains    bool   // MERGE_DOMAIN_CONFIG
	AlgorithmsFile  string // RL_ALGORITHMS_FILE
	PollingInterval time.Duration
}

// Files reads the configuration files: every file under
// RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY (RUNTIME_ROOT
// may be a symlink, swapped to publish a new version), named as
// envoyproxy/ratelimit's runtime names them (config.<path with dots>).
// Symlinked folders are not followed, symlinked files are.
func (s Source) Files() ([]File, error) {
	root, err := filepath.EvalSymlinks(filepath.Join(s.RuntimePath, s.Subdirectory))
	if err != nil {
		return nil, Error("runtime folder: " + err.Error())
	}
	dir := filepath.Join(root, s.AppDirectory)
	if _, err := os.Stat(dir); err != nil {
		return nil, Error("runtime folder: " + err.Error())
	}
	var files []File
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if s.IgnoreDotFiles && path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			info, err := os.Stat(path)
			if err != nil || info.IsDir() {
				return nil // a dangling link, or a folder: not followed
			}
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, File{Name: strings.ReplaceAll(filepath.ToSlash(rel), "/", "."), Content: string(text)})
		return nil
	})
	if err != nil {
		return nil, Error("runtime folder: " + err.Error())
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// Load reads and parses the configuration and the algorithms file.
func (s Source) Load() (*Config, [32]byte, error) {
	files, err := s.Files()
	if err != nil {
		return nil, [32]byte{}, err
	}
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f.Name + "\x00" + f.Content + "\x00"))
	}
	var algorithmsText []byte
	if s.AlgorithmsFile != "" {
		if algorithmsText, err = os.ReadFile(s.AlgorithmsFile); err != nil {
			return nil, [32]byte{}, Error("RL_ALGORITHMS_FILE: " + err.Error())
		}
		h.Write(algorithmsText)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	var algorithms map[string]Choice
	if s.AlgorithmsFile != "" {
		if algorithms, err = ParseAlgorithms(s.AlgorithmsFile, string(algorithmsText)); err != nil {
			return nil, sum, err
		}
	}
	c, err := Load(files, s.MergeDomains, algorithms)
	return c, sum, err
}

// Watch polls the files every PollingInterval and calls apply with each
// new version (or its error) until ctx ends. Polling rather than inotify:
// it sees a swapped RUNTIME_ROOT symlink, edits in place and Kubernetes'
// ConfigMap updates alike. A version that fails to load is reported once;
// the last good one keeps serving.
func (s Source) Watch(ctx context.Context, last [32]byte, apply func(*Config, error)) {
	every := s.PollingInterval
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, sum, err := s.Load()
		if sum == [32]byte{} || sum == last {
			// Unchanged, or the folder could not be read (mid-swap, say):
			// look again next tick rather than report a half-made version.
			continue
		}
		last = sum
		apply(c, err)
	}
}
