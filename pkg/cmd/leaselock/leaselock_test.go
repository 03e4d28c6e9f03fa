package leaselock

import (
	"context"
	"errors"
	"os"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	leaderelectionconverter "github.com/openshift/library-go/pkg/config/leaderelection"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
)

func TestHeldByEarlierContainer(t *testing.T) {
	for _, tc := range []struct {
		holder, pod string
		want        bool
	}{
		{"agent-7c89-abcde_1b2c", "agent-7c89-abcde", true},
		{"agent-7c89-abcde_", "agent-7c89-abcde", true},
		{"agent-7c89-abcdef_1b2c", "agent-7c89-abcde", false}, // another pod whose name extends ours
		{"agent-7c89-xyz12_1b2c", "agent-7c89-abcde", false},
		{"agent-7c89-abcde", "agent-7c89-abcde", false}, // no candidate suffix
		{"", "agent-7c89-abcde", false},
		{"_1b2c", "", false}, // not in a pod
	} {
		if got := HeldByEarlierContainer(tc.holder, tc.pod); got != tc.want {
			t.Errorf("HeldByEarlierContainer(%q, %q) = %v, want %v", tc.holder, tc.pod, got, tc.want)
		}
	}
}

func lease(holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "registration-agent-lock", Namespace: "ns", ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
}

func TestReleaseIfHeldByEarlierContainer(t *testing.T) {
	const pod = "agent-abcde"
	for _, tc := range []struct {
		name       string
		objects    []runtime.Object
		updateErr  error
		pod        string
		wantFreed  string
		wantHolder string // "" with wantUpdate false: not checked
		wantUpdate bool
		wantErr    bool
	}{
		{name: "held by this pod's earlier container", objects: []runtime.Object{lease(pod + "_old")}, pod: pod,
			wantFreed: pod + "_old", wantUpdate: true},
		{name: "held by another replica", objects: []runtime.Object{lease("agent-xyz_1")}, pod: pod, wantHolder: "agent-xyz_1"},
		{name: "no Lease yet", pod: pod},
		{name: "not in a pod", objects: []runtime.Object{lease("_x")}, pod: "", wantHolder: "_x"},
		{name: "another candidate took it meanwhile", objects: []runtime.Object{lease(pod + "_old")}, pod: pod,
			updateErr: apierrors.NewConflict(schema.GroupResource{Resource: "leases"}, "registration-agent-lock", errors.New("changed")), wantUpdate: true},
		{name: "update refused", objects: []runtime.Object{lease(pod + "_old")}, pod: pod,
			updateErr: apierrors.NewForbidden(schema.GroupResource{Resource: "leases"}, "registration-agent-lock", errors.New("no")), wantUpdate: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := kubefake.NewClientset(tc.objects...)
			if tc.updateErr != nil {
				client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.updateErr
				})
			}
			freed, err := ReleaseIfHeldByEarlierContainer(context.Background(), client.CoordinationV1(), "ns", "registration-agent-lock", tc.pod)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if freed != tc.wantFreed {
				t.Errorf("freed %q, want %q", freed, tc.wantFreed)
			}
			updates := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "update" {
					updates++
				}
			}
			if (updates > 0) != tc.wantUpdate {
				t.Errorf("%d updates, want an update: %v", updates, tc.wantUpdate)
			}
			if tc.wantFreed != "" {
				l, err := client.CoordinationV1().Leases("ns").Get(context.Background(), "registration-agent-lock", metav1.GetOptions{})
				if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "" || l.ResourceVersion != "7" && l.ResourceVersion != "" {
					t.Errorf("Lease after the release: %+v (%v), want holderIdentity \"\"", l, err)
				}
			}
			if tc.wantHolder != "" {
				l, _ := client.CoordinationV1().Leases("ns").Get(context.Background(), "registration-agent-lock", metav1.GetOptions{})
				if l == nil || *l.Spec.HolderIdentity != tc.wantHolder {
					t.Errorf("Lease holder changed to %v, want %q kept", l, tc.wantHolder)
				}
			}
		})
	}
}

// TestLibraryGoCandidateIdentity pins what HeldByEarlierContainer relies on: the candidate identity library-go's
// controllercmd gives a leader election (leaderelection.ToLeaderElectionWithLease without an identity) is
// "<hostname>_<uuid>", so that the Lease of an earlier container of this pod is recognised as such. A library-go
// that names candidates otherwise fails here, not silently in a pod.
func TestLibraryGoCandidateIdentity(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Skipf("no hostname: %v", err)
	}
	cfg, err := leaderelectionconverter.ToLeaderElectionWithLease(&rest.Config{Host: "https://127.0.0.1:1"},
		configv1.LeaderElection{Namespace: "ns", Name: "registration-agent-lock"}, "registration-agent", "")
	if err != nil {
		t.Fatal(err)
	}
	identity := cfg.Lock.Identity()
	if !HeldByEarlierContainer(identity, hostname) || len(identity) <= len(hostname)+1 {
		t.Errorf("library-go's candidate identity %q is not <hostname %q>_<uuid>", identity, hostname)
	}
}
