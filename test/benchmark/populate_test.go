//go:build bench

package benchmark

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	// populateWorkers is how many creates run at once against the spoke.
	populateWorkers = 8
	// secretDataBytes is the size of each unrelated Secret's value.
	secretDataBytes = 1024
)

// populateResult says what populate created.
type populateResult struct {
	secrets, namespaces, nodes int
	wantSecrets, wantNodes     int
	took                       time.Duration
	cutShort                   bool
}

func (p populateResult) describe() string {
	var parts []string
	if p.wantNodes > 0 {
		parts = append(parts, fmt.Sprintf("%d Node objects (capacity/allocatable cpu 4, memory 16Gi, pods 110, Ready; "+
			"nobody runs on them)", p.nodes))
	}
	if p.wantSecrets > 0 {
		parts = append(parts, fmt.Sprintf("%d unrelated Secrets (type Opaque, one %d-byte value each) in %d namespaces",
			p.secrets, secretDataBytes, p.namespaces))
	}
	s := strings.Join(parts, " and ") + fmt.Sprintf(", created in %s", p.took.Round(time.Second))
	if p.cutShort {
		s += fmt.Sprintf(" — FEWER than the %d asked for: BENCH_POPULATE_BUDGET ran out on this machine",
			p.wantSecrets+p.wantNodes)
	}
	return s
}

// populate creates wantNodes Nodes and wantSecrets Secrets spread over b.secretNS namespaces on the spoke with
// populateWorkers concurrent creates, until done or populateBudget passes. Objects that already exist count, so
// a second call with larger numbers adds to the first.
func (b *bench) populate(t *testing.T, spoke *framework.Spoke, wantSecrets, wantNodes int) populateResult {
	t.Helper()
	start := time.Now()
	cfg := rest.CopyConfig(spoke.AdminConfig)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit; the workers bound the concurrency
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.populateBudget)
	defer cancel()
	res := populateResult{wantSecrets: wantSecrets, wantNodes: wantNodes}
	if wantSecrets > 0 {
		for i := 0; i < b.secretNS; i++ {
			if err := createNamespace(ctx, spoke, unrelatedNamespace(i)); err != nil {
				t.Fatal(err)
			}
		}
		res.namespaces = b.secretNS
	}

	value := []byte(strings.Repeat("x", secretDataBytes))
	jobs := make(chan func(context.Context) error)
	var secrets, nodes atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < populateWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				if err := job(ctx); err != nil && ctx.Err() == nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	// Nodes first, interleaved with Secrets, so a cut-short run still has both kinds.
	total := wantSecrets + wantNodes
	si, ni := 0, 0
	for k := 0; k < total && ctx.Err() == nil; k++ {
		var job func(context.Context) error
		if ni < wantNodes && (si >= wantSecrets || ni*wantSecrets <= si*wantNodes) {
			name := fmt.Sprintf("bench-node-%05d", ni)
			ni++
			job = func(ctx context.Context) error {
				_, err := client.CoreV1().Nodes().Create(ctx, benchNode(name), metav1.CreateOptions{})
				if err == nil || apierrors.IsAlreadyExists(err) {
					nodes.Add(1)
					return nil
				}
				return fmt.Errorf("creating Node %s: %w", name, err)
			}
		} else {
			ns, name := unrelatedNamespace(si%b.secretNS), fmt.Sprintf("unrelated-%05d", si)
			si++
			job = func(ctx context.Context) error {
				_, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
					Type:       corev1.SecretTypeOpaque,
					Data:       map[string][]byte{"value": value},
				}, metav1.CreateOptions{})
				if err == nil || apierrors.IsAlreadyExists(err) {
					secrets.Add(1)
					return nil
				}
				return fmt.Errorf("creating Secret %s/%s: %w", ns, name, err)
			}
		}
		select {
		case jobs <- job:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		t.Fatalf("populating the spoke: %v", err)
	}
	if b.ctx.Err() != nil {
		t.Fatal("interrupted")
	}
	res.secrets, res.nodes, res.took = int(secrets.Load()), int(nodes.Load()), time.Since(start)
	res.cutShort = res.secrets < wantSecrets || res.nodes < wantNodes
	t.Logf("populated the spoke: %s", res.describe())
	return res
}

func unrelatedNamespace(i int) string { return fmt.Sprintf("unrelated-%03d", i) }

// benchNode is a Node as a kubelet would register it, without anything running on it.
func benchNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "bench": "unrelated"}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
}
