//go:build bench

package benchmark

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BENCH_PROFILE (any value; `make bench-profile` sets it) makes every repetition of the join and memory scenarios
// also write, next to the agent's log in BENCH_LOG_DIR, after the steady wait:
//
//	<cluster>.smaps.txt     both agents: resident memory by mapping (/proc/<pid>/smaps): the binary's file-backed
//	                        pages (text, rodata, data), anonymous memory (Go heap, stacks, runtime), the rest
//	<cluster>.heap.pb.gz    ours: a heap profile (/debug/pprof/heap?gc=1, after a GC), for `go tool pprof`
//	<cluster>.heap.txt      ours: `go tool pprof -top` of it by in-use bytes, and the runtime's MemStats
//	<cluster>.rss-timeline.txt  both agents: VmRSS, VmHWM, RssAnon and RssFile of /proc/<pid>/status sampled every
//	                        5 ms from the exec of the first process through the join and the steady wait: a row (ms
//	                        since exec, KiB) whenever VmRSS moved >= 256 KiB, then the maximum with its time since
//	                        exec and its wall time (UTC, to match the klog times of the agent's log; timeline_test.go)
//
// Our agent serves the profiles on a loopback port through KF_DEBUG_PPROF_ADDR (pkg/profiling StartServer).
// Before each agent start of the join and memory scenarios, in every mode, both binaries' page cache is dropped
// (evictPageCache in timeline_test.go): the binary's file-backed resident pages, most of the peak, depend on how
// the file got into the page cache, and a rebuilt binary (written by the linker) or one read whole would
// otherwise not compare with one faulted in.

// profileOn reports whether BENCH_PROFILE is set.
func profileOn() bool { return os.Getenv("BENCH_PROFILE") != "" }

// writeProfiles writes the files above for agent a; failures are returned as one line for the test log.
func (b *bench) writeProfiles(ctx context.Context, a *agentProc) string {
	base := strings.TrimSuffix(a.logPath, ".log")
	var notes []string
	if a.rss != nil {
		if err := a.rss.stopAndWrite(base+".rss-timeline.txt", fmt.Sprintf("%s (%s agent)", a.cfg.cluster, a.cfg.kind)); err != nil {
			notes = append(notes, err.Error())
		} else {
			notes = append(notes, "RSS timeline in "+base+".rss-timeline.txt")
		}
	}
	if summary, err := smapsSummary(a.pid()); err != nil {
		notes = append(notes, err.Error())
	} else if err := os.WriteFile(base+".smaps.txt", []byte(summary), 0o644); err != nil {
		notes = append(notes, err.Error())
	} else {
		notes = append(notes, "RSS by mapping in "+base+".smaps.txt")
	}
	if a.pprofAddr == "" {
		return strings.Join(notes, "; ")
	}
	profile, err := httpGet(ctx, "http://"+a.pprofAddr+"/debug/pprof/heap?gc=1")
	if err != nil {
		notes = append(notes, err.Error())
		return strings.Join(notes, "; ")
	}
	if err := os.WriteFile(base+".heap.pb.gz", profile, 0o644); err != nil {
		notes = append(notes, err.Error())
		return strings.Join(notes, "; ")
	}
	var text bytes.Buffer
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-sample_index=inuse_space", b.oursBinary, base+".heap.pb.gz").CombinedOutput()
	if err != nil {
		fmt.Fprintf(&text, "go tool pprof failed: %v\n", err)
	}
	text.Write(top)
	if stats, err := httpGet(ctx, "http://"+a.pprofAddr+"/debug/pprof/heap?debug=1"); err == nil {
		if i := bytes.Index(stats, []byte("# runtime.MemStats")); i >= 0 {
			text.WriteString("\n")
			text.Write(stats[i:])
		}
	}
	if err := os.WriteFile(base+".heap.txt", text.Bytes(), 0o644); err != nil {
		notes = append(notes, err.Error())
	} else {
		notes = append(notes, "heap profile in "+base+".heap.pb.gz, top in "+base+".heap.txt")
	}
	return strings.Join(notes, "; ")
}

// httpGet returns the body of a GET of url (10 s at most).
func httpGet(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d, %v", url, resp.StatusCode, err)
	}
	return body, nil
}

// smapsSummary sums Rss of /proc/<pid>/smaps by mapping: the process's own binary (file-backed: text, rodata,
// data), anonymous mappings ([heap], [stack] and unnamed: the Go heap, goroutine stacks, the runtime's
// metadata), and other files; each line in MiB, the largest anonymous mappings listed after.
func smapsSummary(pid int) (string, error) {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return "", fmt.Errorf("reading the mappings of process %d: %w", pid, err)
	}
	defer f.Close()
	type mapping struct {
		name  string
		perms string
		rss   int64
	}
	var maps []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && len(fields) >= 5 {
			m := mapping{perms: fields[1]}
			if len(fields) >= 6 {
				m.name = fields[5]
			}
			maps = append(maps, m)
			continue
		}
		if fields[0] == "Rss:" && len(maps) > 0 && len(fields) >= 2 {
			if v, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				maps[len(maps)-1].rss = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	var binText, binData, anon, other, total int64
	var anons []mapping
	for _, m := range maps {
		total += m.rss
		switch {
		case exe != "" && m.name == exe && strings.Contains(m.perms, "x"):
			binText += m.rss
		case exe != "" && m.name == exe:
			binData += m.rss
		case m.name == "" || strings.HasPrefix(m.name, "["):
			anon += m.rss
			anons = append(anons, m)
		default:
			other += m.rss
		}
	}
	sort.Slice(anons, func(i, j int) bool { return anons[i].rss > anons[j].rss })
	var out strings.Builder
	fmt.Fprintf(&out, "process %d (%s), resident memory by mapping from /proc/%d/smaps\n", pid, exe, pid)
	fmt.Fprintf(&out, "total Rss                          %8.1f MiB\n", mib(total))
	fmt.Fprintf(&out, "binary text (r-x, file-backed)     %8.1f MiB\n", mib(binText))
	fmt.Fprintf(&out, "binary rodata/data (file-backed)   %8.1f MiB\n", mib(binData))
	fmt.Fprintf(&out, "anonymous (Go heap, stacks, rt)    %8.1f MiB\n", mib(anon))
	fmt.Fprintf(&out, "other files                        %8.1f MiB\n", mib(other))
	out.WriteString("largest anonymous mappings (KiB):\n")
	for i, m := range anons {
		if i == 10 || m.rss == 0 {
			break
		}
		fmt.Fprintf(&out, "  %8d %s %s\n", m.rss, m.perms, m.name)
	}
	return out.String(), nil
}
