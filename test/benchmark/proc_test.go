//go:build bench

package benchmark

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clockTicksPerSecond is USER_HZ, the unit of utime/stime in /proc/<pid>/stat: 100 on every Linux architecture
// Go supports (sysconf(_SC_CLK_TCK) would need cgo).
const clockTicksPerSecond = 100

// memory is a process's resident set from /proc/<pid>/status, in KiB.
type memory struct {
	// RSSKiB is VmRSS, the resident set now.
	RSSKiB int64
	// PeakKiB is VmHWM, the largest resident set since the process started.
	PeakKiB int64
	// AnonKiB and FileKiB are RssAnon and RssFile, the anonymous (Go heap, stacks, runtime) and file-backed
	// (the binary's pages) parts of RSSKiB; 0 on kernels before 4.5.
	AnonKiB, FileKiB int64
}

// readMemory reads VmRSS, VmHWM, RssAnon and RssFile of pid.
func readMemory(pid int) (memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	var m memory
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			m.RSSKiB = v
		case "VmHWM:":
			m.PeakKiB = v
		case "RssAnon:":
			m.AnonKiB = v
		case "RssFile:":
			m.FileKiB = v
		}
	}
	if m.RSSKiB == 0 || m.PeakKiB == 0 {
		return memory{}, fmt.Errorf("process %d: no VmRSS/VmHWM in /proc/%d/status", pid, pid)
	}
	return m, nil
}

// cpuSeconds returns utime+stime of pid (user and system CPU time of all its threads), in seconds.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces; fields after it start at state (3).
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("process %d: malformed /proc/%d/stat", pid, pid)
	}
	fields := strings.Fields(s[end+1:])
	// utime and stime are fields 14 and 15 of stat, i.e. index 11 and 12 after the command name.
	if len(fields) < 13 {
		return 0, fmt.Errorf("process %d: short /proc/%d/stat", pid, pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("process %d: parsing utime/stime %q/%q", pid, fields[11], fields[12])
	}
	return float64(utime+stime) / clockTicksPerSecond, nil
}

// machineCPUSeconds returns the CPU time the whole machine has spent busy since boot (/proc/stat's first line:
// user, nice, system, irq, softirq and steal), in seconds summed over its CPUs.
func machineCPUSeconds() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("reading /proc/stat: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: field %d %q: %w", i, fields[i], err)
		}
		busy += v
	}
	return float64(busy) / clockTicksPerSecond, nil
}

// cpuOfGroups returns the CPU seconds spent so far by each named group of processes (summed) and, under
// "machine", by the whole machine; a process that has exited counts 0.
func cpuOfGroups(groups map[string][]int) (map[string]float64, error) {
	out := make(map[string]float64, len(groups)+1)
	for name, pids := range groups {
		for _, pid := range pids {
			if s, err := cpuSeconds(pid); err == nil {
				out[name] += s
			}
		}
	}
	m, err := machineCPUSeconds()
	if err != nil {
		return nil, err
	}
	out["machine"] = m
	return out, nil
}

// apiserverPID finds the kube-apiserver process serving serverURL (https://127.0.0.1:<port>): envtest starts it
// with --secure-port=<port>, and the framework does not expose its process.
func apiserverPID(serverURL string) (int, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return 0, fmt.Errorf("parsing the apiserver URL %q: %w", serverURL, err)
	}
	want := "--secure-port=" + u.Port()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) == 0 || filepath.Base(args[0]) != "kube-apiserver" {
			continue
		}
		for _, a := range args[1:] {
			if a == want {
				return strconv.Atoi(filepath.Base(dir))
			}
		}
	}
	return 0, fmt.Errorf("no kube-apiserver process with %s", want)
}

// machine describes the machine the benchmark ran on.
type machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpuModel"`
	MemoryGiB   string `json:"memoryGiB"`
	GoVersion   string `json:"goVersion"`
	Kernel      string `json:"kernel"`
	LoadAtStart string `json:"loadAverageAtStart"`
	LoadAtEnd   string `json:"loadAverageAtEnd,omitempty"`
}

// describeMachine reads nproc, the CPU model, MemTotal, the kernel release and the load average.
func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadAtStart: loadAverage()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				if kib, err := strconv.ParseFloat(fields[1], 64); err == nil {
					m.MemoryGiB = strconv.FormatFloat(kib/1024/1024, 'f', 1, 64)
				}
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	return m
}

// loadAverage returns the 1, 5 and 15 minute load averages from /proc/loadavg.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return "unknown"
	}
	return strings.Join(fields[:3], " ")
}

// cpuRate returns process pid's CPU use (utime+stime) over the next window, in CPU seconds per second. It fails
// the test when the process cannot be read and stops it when the run is interrupted.
func (b *bench) cpuRate(t *testing.T, pid int, window time.Duration) float64 {
	t.Helper()
	before, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.sleep(window); err != nil {
		t.Fatal("interrupted")
	}
	after, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	return (after - before) / window.Seconds()
}
