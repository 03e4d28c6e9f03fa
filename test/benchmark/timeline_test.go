//go:build bench

package benchmark

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

const (
	// timelineInterval is how often the RSS timeline samples /proc/<pid>/status (BENCH_PROFILE).
	timelineInterval = 5 * time.Millisecond
	// timelineStepKiB is the change of VmRSS since the last printed row that prints a new row.
	timelineStepKiB = 256
	// timelineMax bounds the sampling when nothing stops it (the agent never joins).
	timelineMax = 3 * time.Minute
)

// rssSample is one reading of the timeline: the time since the process's exec and its memory figures in KiB.
type rssSample struct {
	elapsed time.Duration
	mem     memory
}

// rssTimeline keeps the samples of one process's resident set that moved VmRSS by at least timelineStepKiB
// since the last kept one, and the largest VmRSS seen with its time. The zero value is ready to use.
type rssTimeline struct {
	rows    []rssSample
	max     rssSample
	last    rssSample
	samples int
}

// add records sample s; samples come in time order.
func (tl *rssTimeline) add(s rssSample) {
	tl.samples++
	if len(tl.rows) == 0 || abs64(s.mem.RSSKiB-tl.rows[len(tl.rows)-1].mem.RSSKiB) >= timelineStepKiB {
		tl.rows = append(tl.rows, s)
	}
	if s.mem.RSSKiB > tl.max.mem.RSSKiB {
		tl.max = s
	}
	tl.last = s
}

// render returns the timeline as text: a header naming the process and the wall time of its exec (to match the
// klog times of its log), one row per kept sample (elapsed ms; VmRSS, VmHWM, RssAnon, RssFile in KiB), the last
// sample, and the maximum. VmHWM at the last sample above the maximum VmRSS means the peak fell between two
// samples.
func (tl *rssTimeline) render(title string, exec time.Time) string {
	var out strings.Builder
	fmt.Fprintf(&out, "# %s\n# exec at %s; /proc/<pid>/status every %s, a row when VmRSS moved >= %d KiB\n",
		title, exec.UTC().Format("15:04:05.000000"), timelineInterval, timelineStepKiB)
	out.WriteString("# elapsed_ms  VmRSS_KiB  VmHWM_KiB  RssAnon_KiB  RssFile_KiB\n")
	for _, r := range tl.rows {
		fmt.Fprintf(&out, "%10d %10d %10d %12d %12d\n", r.elapsed.Milliseconds(), r.mem.RSSKiB, r.mem.PeakKiB, r.mem.AnonKiB, r.mem.FileKiB)
	}
	fmt.Fprintf(&out, "last: %d ms VmRSS %d KiB VmHWM %d KiB (%d samples)\n",
		tl.last.elapsed.Milliseconds(), tl.last.mem.RSSKiB, tl.last.mem.PeakKiB, tl.samples)
	fmt.Fprintf(&out, "max: VmRSS %d KiB (%.1f MiB; RssAnon %d, RssFile %d) at %d ms (wall %s)\n", tl.max.mem.RSSKiB,
		mib(tl.max.mem.RSSKiB), tl.max.mem.AnonKiB, tl.max.mem.FileKiB, tl.max.elapsed.Milliseconds(),
		exec.Add(tl.max.elapsed).UTC().Format("15:04:05.000"))
	return out.String()
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// rssSampler samples one process from its exec until stop is called, the process exits or timelineMax passes.
type rssSampler struct {
	pid   int
	exec  time.Time
	stopC chan struct{}
	done  chan struct{}
	tl    rssTimeline
}

// startRSSSampler starts sampling process pid, started at exec; exited closes when the process exits.
func startRSSSampler(pid int, exec time.Time, exited <-chan struct{}) *rssSampler {
	s := &rssSampler{pid: pid, exec: exec, stopC: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(timelineInterval)
		defer tick.Stop()
		for {
			if m, err := readMemory(pid); err == nil {
				s.tl.add(rssSample{elapsed: time.Since(exec), mem: m})
			}
			if time.Since(exec) > timelineMax {
				return
			}
			select {
			case <-s.stopC:
				return
			case <-exited:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stopAndWrite stops the sampling and writes the timeline to path.
func (s *rssSampler) stopAndWrite(path, title string) error {
	select {
	case <-s.stopC:
	default:
		close(s.stopC)
	}
	<-s.done
	return os.WriteFile(path, []byte(s.tl.render(fmt.Sprintf("%s, pid %d", title, s.pid), s.exec)), 0o644)
}

// posixFadvDontNeed is POSIX_FADV_DONTNEED of fadvise64(2) on Linux.
const posixFadvDontNeed = 4

// evictPageCache asks the kernel to drop the page cache of file (fadvise POSIX_FADV_DONTNEED), so that the next
// exec of it reads it back through its own page faults. The join and memory scenarios do it before every agent
// start (agentConfig.coldStart): how the binary's pages got into the page cache decides how many of them each
// page fault maps (the kernel maps a large folio of a file as a whole, and sequential reads and writes make
// larger folios than the faults of an exec do). `klusterlet-failover version`, which runs only package initialisation, peaked at 48 MiB after the
// eviction and at 71 MiB after `cat` of the file on the same kernel (6.18, ext4). Pages that a running process
// maps stay, and so do dirty ones: the file is synced first (a binary the linker just wrote is dirty).
func evictPageCache(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", file, err)
	}
	if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, posixFadvDontNeed, 0, 0); errno != 0 {
		return fmt.Errorf("fadvise %s: %w", file, errno)
	}
	return nil
}
