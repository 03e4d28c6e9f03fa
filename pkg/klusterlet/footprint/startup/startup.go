// Package startup, imported for its side effect by the agent's main package, bounds the binary's resident pages
// from the start of package initialisation (footprint.StartupTrim): it imports nothing but the footprint
// package and the standard library, so Go initialises it before the Kubernetes and library-go packages whose
// initialisation touches most of those pages.
package startup

import (
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/footprint"
)

const (
	// window bounds the trimming when the agent never calls footprint.StopStartupTrim (it does when the
	// command's set-up is done, about 0.3 s after exec in make bench).
	window = 5 * time.Second
	// interval is how often the file-backed resident pages are read: initialisation touches about 1 MiB a
	// millisecond.
	interval = 5 * time.Millisecond
	// step is how much the file-backed resident set may grow before the binary's pages are dropped again: with
	// 8 MiB, `klusterlet-failover version` (package initialisation alone) peaked at 40 MiB instead of 48 MiB.
	step = 8 << 20
)

func init() {
	footprint.StartupTrim(window, interval, step)
}
