//go:build linux

package footprint

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Release gives back what the start-up left behind, and returns how many bytes of the binary's read-only
// mappings it asked the kernel to drop (0 when /proc/self/maps cannot be read; the heap is released anyway):
//
//   - debug.FreeOSMemory: a garbage collection, then every free heap page is returned at once, where the Go
//     runtime would return them over minutes (a Node list decoded at a session's start is garbage the moment
//     the informer holds its compacted copies);
//   - madvise(MADV_DONTNEED) on the binary's read-only file mappings (code r-xp and read-only data r--p of
//     /proc/self/exe): package initialisation, scheme registration and the command set-up read tens of MiB of
//     code and tables once. The pages stay in the page cache; the ones still used fault back in (a minor fault)
//     at their next use, so the resident set settles at what the agent runs. Writable mappings are never
//     touched: dropping them would lose their contents.
//
// It is safe to call at any time and from any goroutine; it costs one garbage collection.
func Release() (binaryBytes int64) {
	debug.FreeOSMemory()
	ranges, err := readOnlyBinaryMappings()
	if err != nil {
		return 0
	}
	return dropMappings(ranges)
}

// mapping is an address range [start, end) of the process.
type mapping struct{ start, end uintptr }

// readOnlyBinaryMappings returns the private, non-writable mappings of the running binary's file from
// /proc/self/maps.
func readOnlyBinaryMappings() ([]mapping, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMaps(bufio.NewScanner(f), exe)
}

// parseMaps returns the mappings of file exe in /proc/<pid>/maps lines (address perms offset dev inode path)
// that are private and not writable (perms r-xp or r--p). A malformed line is an error.
func parseMaps(sc *bufio.Scanner, exe string) ([]mapping, error) {
	var out []mapping
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || strings.Join(fields[5:], " ") != exe {
			continue
		}
		perms := fields[1]
		if len(perms) != 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			return nil, fmt.Errorf("malformed mapping %q", sc.Text())
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("malformed mapping %q", sc.Text())
		}
		out = append(out, mapping{start: uintptr(start), end: uintptr(end)})
	}
	return out, sc.Err()
}
