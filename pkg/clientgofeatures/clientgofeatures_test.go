package clientgofeatures

import (
	"testing"

	clientfeatures "k8s.io/client-go/features"
)

// TestPreferListForInformers: WatchListClient is off unless KUBE_FEATURE_WatchListClient is set; other gates are
// client-go's.
func TestPreferListForInformers(t *testing.T) {
	cases := []struct {
		name string
		env  string // "" leaves the variable unset
		want bool
	}{
		{name: "unset: LIST", want: false},
		{name: "explicitly on", env: "true", want: true},
		{name: "explicitly off", env: "false", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(watchListClientEnv, tc.env)
			}
			// client-go v0.35 defaults WatchListClient to on; the environment variable, when set, decides.
			base := fakeGates{clientfeatures.WatchListClient: tc.env != "false", clientfeatures.InOrderInformers: true}
			g := listPreferringGates{base}
			if got := g.Enabled(clientfeatures.WatchListClient); got != tc.want {
				t.Errorf("WatchListClient enabled = %t, want %t", got, tc.want)
			}
			if !g.Enabled(clientfeatures.InOrderInformers) {
				t.Errorf("InOrderInformers: another gate was changed")
			}
		})
	}
}

// fakeGates is a fixed set of client-go feature gates.
type fakeGates map[clientfeatures.Feature]bool

func (g fakeGates) Enabled(key clientfeatures.Feature) bool { return g[key] }
