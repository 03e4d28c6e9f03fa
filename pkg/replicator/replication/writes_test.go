package replication

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// The workers copying a new cluster's objects to a hub all find its namespace unknown there at once, and the
// cluster's fence marks are written on that namespace at the same time. They must share one namespace create:
// before, each sent its own and all but one were refused (409), about 4 % of a standby's writes in the
// 3,500-cluster benchmark, and fence marks that lost the race failed until the next sync.
func TestConcurrentCopiesOfANewClusterCreateItsNamespaceOnce(t *testing.T) {
	kinds := []mirror.Kind{testKind(t, failoverv1alpha1.KindManagedCluster), testKind(t, failoverv1alpha1.KindManifestWork)}
	mwKind := kinds[1]
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds)
	b := newTestHub(t, testHubB, handler, kinds)
	// Each namespace create takes a while, as on a busy hub, so the workers' calls and the fence marks overlap.
	b.client.slowCreates = map[schema.GroupVersionResource]time.Duration{mirror.NamespaceGVR: 200 * time.Millisecond}
	c, _ := startController(t, handler, Options{Kinds: kinds}, a, b)

	const workers = 8
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := manifestWork(testCluster, "work-"+string(rune('a'+i)), "cm", nil)
			errs[i] = c.create(context.Background(), b.hub, mwKind, work)
		}()
	}
	var markErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		markErr = c.markNamespace(context.Background(), b.hub, testCluster, fence.NamespaceMark(testHubA, time.Now()))
	}()
	wg.Wait()
	if markErr != nil {
		t.Errorf("fence marks of namespace %s: %v", testCluster, markErr)
	}
	if ns, err := b.fake.Resource(mirror.NamespaceGVR).Get(context.Background(), testCluster, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s on %s: %v", testCluster, testHubB, err)
	} else if got := ns.GetLabels()[fence.LabelClusterHub]; got != testHubA {
		t.Errorf("namespace %s on %s: label %s = %q, want %q (the fence mark)", testCluster, testHubB, fence.LabelClusterHub, got, testHubA)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("create of work %d: %v", i, err)
		}
	}

	var namespaceCreates []string
	for _, action := range b.fake.Actions() {
		created, ok := action.(interface{ GetObject() runtime.Object })
		if !ok || action.GetResource() != mirror.NamespaceGVR || action.GetVerb() != "create" {
			continue
		}
		// The incarnation marker's namespace is made once too, apart.
		if m, ok := created.GetObject().(metav1.Object); ok && m.GetName() != DefaultMarkerNamespace {
			namespaceCreates = append(namespaceCreates, m.GetName())
		}
	}
	if len(namespaceCreates) != 1 {
		t.Errorf("namespace creates on %s: got %d, want 1 (shared by the %d concurrent copies and the fence marks)", testHubB, len(namespaceCreates), workers)
	}
	if got := len(b.writes(mwKind)); got != workers {
		t.Errorf("ManifestWork creates on %s: got %d, want %d", testHubB, got, workers)
	}
	if !c.namespaceKnown(testHubB, testCluster) {
		t.Errorf("namespace %s is not known on %s after its create", testCluster, testHubB)
	}
}
