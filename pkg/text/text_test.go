package text

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTruncate(t *testing.T) {
	cases := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "short", in: "abc", n: 5, want: "abc"},
		{name: "exact", in: "abcde", n: 5, want: "abcde"},
		{name: "long", in: "abcdefgh", n: 5, want: "ab..."},
		{name: "status limit", in: strings.Repeat("x", 2000), n: 1024, want: strings.Repeat("x", 1021) + "..."},
		{name: "the cut does not split a character", in: "ab€defgh", n: 7, want: "ab..."},
		{name: "the cut right after a character", in: "ab€defgh", n: 8, want: "ab€..."},
		{name: "a limit no longer than the marker", in: "abcdef", n: 3, want: "abc"},
		{name: "a limit no longer than the marker, inside a character", in: "€€", n: 2, want: ""},
		{name: "zero", in: "abc", n: 0, want: ""},
		{name: "negative", in: "abc", n: -1, want: ""},
		{name: "empty", in: "", n: 0, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.in, tc.n)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Truncate(%q, %d) (-want +got):\n%s", tc.in, tc.n, diff)
			}
			if len(got) > max(tc.n, 0) {
				t.Errorf("Truncate(%d) returned %d bytes", tc.n, len(got))
			}
			if !utf8.ValidString(got) {
				t.Errorf("Truncate returned invalid UTF-8 %q", got)
			}
		})
	}
}

func TestTime(t *testing.T) {
	at := time.Date(2026, 3, 4, 6, 6, 7, 999, time.FixedZone("CET", 3600))
	if got, want := Time(at), "2026-03-04T05:06:07Z"; got != want {
		t.Errorf("Time = %q, want %q", got, want)
	}
}

func TestError(t *testing.T) {
	if got := Error(nil); got != "" {
		t.Errorf("Error(nil) = %q, want empty", got)
	}
	if got := Error(errors.New("boom")); got != "boom" {
		t.Errorf("Error(boom) = %q, want boom", got)
	}
}
