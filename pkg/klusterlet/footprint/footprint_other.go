//go:build !linux

package footprint

import (
	"runtime/debug"
	"time"
)

// Release returns the free heap to the operating system (debug.FreeOSMemory) and 0: outside Linux the binary's
// mappings are not read (there is no /proc/self/maps).
func Release() (binaryBytes int64) {
	debug.FreeOSMemory()
	return 0
}

// StartupTrim does nothing outside Linux (the Linux version drops the binary's pages while the process starts).
func StartupTrim(window, interval time.Duration, step int64) {}

// StopStartupTrim does nothing outside Linux.
func StopStartupTrim() {}
