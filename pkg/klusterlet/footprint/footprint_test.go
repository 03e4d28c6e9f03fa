//go:build linux

package footprint

import (
	"bufio"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestParseMapsKeepsReadOnlyMappingsOfTheBinary: only the private, non-writable mappings of the binary's file
// are returned; its writable data, other files, anonymous memory and shared mappings are not.
func TestParseMapsKeepsReadOnlyMappingsOfTheBinary(t *testing.T) {
	maps := `00400000-01e00000 r-xp 00000000 fd:01 123 /usr/bin/agent
01e00000-03c00000 r--p 01a00000 fd:01 123 /usr/bin/agent
03c00000-03d00000 rw-p 03800000 fd:01 123 /usr/bin/agent
03d00000-03e00000 rw-p 00000000 00:00 0
7f0000000000-7f0000100000 r--s 00000000 fd:01 456 /usr/bin/agent
7f0000100000-7f0000200000 r-xp 00000000 fd:01 789 /usr/lib/other.so
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]
`
	got, err := parseMaps(bufio.NewScanner(strings.NewReader(maps)), "/usr/bin/agent")
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{{start: 0x400000, end: 0x1e00000}, {start: 0x1e00000, end: 0x3c00000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseMaps = %#v, want %#v", got, want)
	}
	if _, err := parseMaps(bufio.NewScanner(strings.NewReader("zz-00 r-xp 0 fd:01 1 /usr/bin/agent\n")), "/usr/bin/agent"); err == nil {
		t.Error("parseMaps accepted a malformed address")
	}
}

// TestReleaseDropsTheBinaryPagesAndKeepsRunning: on Linux, Release asks to drop the test binary's read-only
// mappings, and the code and data in them still work afterwards (they fault back in).
func TestReleaseDropsTheBinaryPagesAndKeepsRunning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	if n := Release(); n <= 0 {
		t.Fatalf("Release dropped %d bytes of the binary, want > 0", n)
	}
	// Code, read-only data (the string table) and the heap after the drop.
	if s := strings.Repeat("ab", 3); s != "ababab" {
		t.Errorf("after Release: %q", s)
	}
	if n := Release(); n <= 0 {
		t.Errorf("a second Release dropped %d bytes", n)
	}
}
