package failover

import (
	"fmt"
	"strings"
	"testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// TestAddOnStatusFor: the status copy keeps the CRD's limits (64 entries, 1024-character messages) and is a copy.
func TestAddOnStatusFor(t *testing.T) {
	if got := addOnStatusFor(nil); got != nil {
		t.Errorf("addOnStatusFor(nil) = %v, want nil", got)
	}
	var list []failoverv1alpha1.AddOnRegistrationStatus
	for i := range 70 {
		list = append(list, failoverv1alpha1.AddOnRegistrationStatus{Name: fmt.Sprintf("a%d", i), Secret: fmt.Sprintf("ns/a%d", i),
			State: failoverv1alpha1.AddOnRegistrationRegistered, Message: strings.Repeat("x", 2000)})
	}
	got := addOnStatusFor(list)
	if len(got) != maxAddOnStatuses {
		t.Errorf("%d entries, want %d", len(got), maxAddOnStatuses)
	}
	if len(got[0].Message) != maxStatusMessage {
		t.Errorf("message of %d characters, want %d", len(got[0].Message), maxStatusMessage)
	}
	got[0].Name = "changed"
	if list[0].Name != "a0" {
		t.Error("addOnStatusFor shares entries with its input")
	}
}
