//go:build !linux

package footprint

import "runtime/debug"

// Release returns the free heap to the operating system (debug.FreeOSMemory) and 0: outside Linux the binary's
// mappings are not read (there is no /proc/self/maps).
func Release() (binaryBytes int64) {
	debug.FreeOSMemory()
	return 0
}
