package hubsession

import "testing"

// TestTakeover walks the takeover rules over a sequence of Secret contents: each takeover of this process's
// credentials is reported once; a deletion in between does not hide one; a Secret that was never ours is not one.
func TestTakeover(t *testing.T) {
	ourCert, theirCert, otherCert := []byte("ours"), []byte("theirs"), []byte("other")
	type look struct {
		cert       []byte
		wrote      bool
		wantReport bool
	}
	cases := []struct {
		name  string
		ours  bool
		looks []look
	}{
		{name: "foreign credentials at start are not a takeover", looks: []look{
			{cert: theirCert}, {cert: otherCert}, {cert: ourCert, wrote: true}, {cert: theirCert, wantReport: true}}},
		{name: "each takeover once", ours: true, looks: []look{
			{cert: theirCert, wantReport: true}, {cert: theirCert}, {cert: otherCert},
			{cert: ourCert, wrote: true}, {cert: otherCert, wantReport: true}}},
		{name: "deleted, then created by another writer", ours: true, looks: []look{
			{cert: nil}, {cert: theirCert, wantReport: true}}},
		{name: "deleted and written again by this process", ours: true, looks: []look{
			{cert: nil}, {cert: ourCert, wrote: true}, {cert: nil}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ours := tc.ours
			for i, l := range tc.looks {
				var report bool
				report, ours = Takeover(ours, l.cert, l.wrote)
				if report != l.wantReport {
					t.Fatalf("look %d (%q, wrote %t): report %t, want %t", i, l.cert, l.wrote, report, l.wantReport)
				}
			}
		})
	}
}
