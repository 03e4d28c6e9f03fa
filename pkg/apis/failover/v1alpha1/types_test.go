package v1alpha1

import (
	"strings"
	"testing"
	"time"
)

// TestHubsReport: String and ParseHubsReport round-trip; malformed values are refused with the part named.
func TestHubsReport(t *testing.T) {
	r := HubsReport{Writer: "fleet", Time: time.Date(2026, 12, 5, 8, 0, 0, 500, time.FixedZone("x", 3600)), Every: 5 * time.Minute}
	value := r.String()
	if want := "writer=fleet,time=2026-12-05T07:00:00Z,every=5m0s"; value != want {
		t.Fatalf("String() = %q, want %q", value, want)
	}
	got, err := ParseHubsReport(value)
	if err != nil || got.Writer != "fleet" || !got.Time.Equal(r.Time.Truncate(time.Second)) || got.Every != r.Every {
		t.Fatalf("ParseHubsReport(%q) = %+v, %v; want %+v", value, got, err, r)
	}
	if _, err := ParseHubsReport("every=1m, writer=w ,time=2026-12-05T07:00:00Z,future=x"); err != nil {
		t.Errorf("parts in another order, spaces and an unknown part: %v", err)
	}
	for value, want := range map[string]string{
		"":                                   `part "" is not key=value`,
		"writer=w,time=2026-12-05T07:00:00Z": "every is missing",
		"writer=w,time=today,every=1m":       `time "today"`,
		"writer=w,time=2026-12-05T07:00:00Z,every=-1m": "every \"-1m\": must be positive",
		"time=2026-12-05T07:00:00Z,every=1m":           "writer is missing",
	} {
		if _, err := ParseHubsReport(value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHubsReport(%q) = %v, want an error containing %q", value, err, want)
		}
	}
}
