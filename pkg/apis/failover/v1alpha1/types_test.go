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

func TestAgentEpoch(t *testing.T) {
	for _, e := range []AgentEpoch{{Number: 1}, {Number: 42, From: "hub-b"}} {
		got, err := ParseAgentEpoch(e.String())
		if err != nil || got != e {
			t.Errorf("ParseAgentEpoch(%q) = %v, %v; want %v", e.String(), got, err, e)
		}
	}
	if s := (AgentEpoch{Number: 7, From: "primary"}).String(); s != "epoch=7,from=primary" {
		t.Errorf("String() = %q", s)
	}
	if got, err := ParseAgentEpoch("from=primary, epoch=3, future=x"); err != nil || got != (AgentEpoch{Number: 3, From: "primary"}) {
		t.Errorf("order, spaces and unknown keys: %v, %v", got, err)
	}
	for _, bad := range []string{"", "epoch=0", "epoch=-1", "epoch=x", "from=primary", "epoch"} {
		if _, err := ParseAgentEpoch(bad); err == nil {
			t.Errorf("ParseAgentEpoch(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), AnnotationEpoch) {
			t.Errorf("ParseAgentEpoch(%q) error %q does not name the annotation", bad, err)
		}
	}
}
