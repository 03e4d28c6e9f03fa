//go:build linux

package footprint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// StartupTrim bounds the binary's resident pages while the process starts. Package initialisation and the
// command's set-up run a large share of the binary's code and read its tables once each, and the kernel maps
// the page-cache pages around every page touched (fault-around, a large folio as a whole): in make
// bench-profile the file-backed part of the resident set (RssFile) reached 44 MiB 40 ms after exec, before
// main ran, and 41 MiB again in the command's set-up; the peak resident set (VmHWM) of the small spoke was
// that.
//
// It starts a goroutine that reads the process's file-backed resident pages (/proc/self/statm, "shared") every
// interval, and drops the binary's read-only mappings (as Release does, without its garbage collection)
// whenever they grew by step bytes or more since the last drop. The pages still used fault back in from the
// page cache (minor faults). It returns at once; the goroutine ends after window or at StopStartupTrim,
// whichever comes first. Once the agent runs its controllers, dropping pages no longer bounds anything: the code
// that runs then faults tens of MiB back within milliseconds. Outside Linux it does nothing.
func StartupTrim(window, interval time.Duration, step int64) {
	pageSize := int64(os.Getpagesize())
	// The first reading is taken here, not in the goroutine: it may first run after initialisation touched more.
	base, ok := fileResident(pageSize)
	if !ok {
		return
	}
	go startupTrim(clock.RealClock{}, trimStop, base, window, interval, step, nil)
}

var (
	// trimStop is closed by StopStartupTrim.
	trimStop     = make(chan struct{})
	trimStopOnce sync.Once
)

// StopStartupTrim ends the goroutine of StartupTrim at its next reading; safe to call more than once and when
// StartupTrim never ran.
func StopStartupTrim() { trimStopOnce.Do(func() { close(trimStop) }) }

// startupTrim is StartupTrim's loop on clk from the file-backed resident bytes base, until window passed or stop
// is closed; dropped, when not nil, is called with the bytes of every drop.
func startupTrim(clk clock.WithTicker, stop <-chan struct{}, base int64, window, interval time.Duration, step int64, dropped func(int64)) {
	pageSize := int64(os.Getpagesize())
	deadline := clk.Now().Add(window)
	var ranges []mapping
	tick := clk.NewTicker(interval)
	defer tick.Stop()
	for clk.Now().Before(deadline) {
		select {
		case <-stop:
			return
		case <-tick.C():
		}
		now, ok := fileResident(pageSize)
		if !ok {
			return
		}
		if !shouldTrim(base, now, step) {
			continue
		}
		if ranges == nil {
			var err error
			if ranges, err = readOnlyBinaryMappings(); err != nil || len(ranges) == 0 {
				return
			}
		}
		n := dropMappings(ranges)
		if dropped != nil {
			dropped(n)
		}
		if base, ok = fileResident(pageSize); !ok {
			return
		}
	}
}

// shouldTrim reports whether the file-backed resident bytes grew from base to now by step or more.
func shouldTrim(base, now, step int64) bool { return now-base >= step }

// dropMappings asks the kernel to drop the resident pages of ranges (madvise MADV_DONTNEED) and returns the
// bytes of the ranges it accepted.
func dropMappings(ranges []mapping) (bytes int64) {
	for _, r := range ranges {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, syscall.MADV_DONTNEED); errno == 0 {
			bytes += int64(r.end - r.start)
		}
	}
	return bytes
}

// fileResident returns the file-backed and shared resident bytes of the process (the third field of
// /proc/self/statm, in pages of pageSize), and false when it cannot be read.
func fileResident(pageSize int64) (int64, bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	pages, ok := parseStatmShared(string(data))
	return pages * pageSize, ok
}

// parseStatmShared returns the third field (resident shared pages: file-backed and shared memory) of a
// /proc/<pid>/statm line ("size resident shared text lib data dt"), and false for a malformed line.
func parseStatmShared(line string) (int64, bool) {
	fields := strings.Fields(line)
	if len(fields) < 3 {
		return 0, false
	}
	v, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}
