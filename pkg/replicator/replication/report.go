package replication

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// publishSteps writes, on src (cluster's ManagedCluster on its source hub), which other hubs are in step with
// it and which are behind (mirror.StepPatch), with the report's writer and time (mirror.AnnotationHubsReported):
// when the lists changed (with the time last written), and with a new time once every Options.ReportInterval,
// so that an agent can tell a running replicator's report from a stopped one's. It queues the ManagedCluster
// again for the next confirmation.
func (c *Controller) publishSteps(ctx context.Context, cluster string, source *hubconn.Hub, src *unstructured.Unstructured) error {
	steps := make([]mirror.HubStep, 0, len(c.opts.Hubs)-1)
	for _, h := range c.opts.Hubs {
		if h == source {
			continue
		}
		steps = append(steps, mirror.HubStep{Hub: h.Name(), Ready: h.Ready(), Pending: c.pendingFor(h.Name(), cluster)})
	}
	k := c.kinds[failoverv1alpha1.KindManagedCluster]
	key := Key{Kind: k.Name, Name: cluster}
	now := c.opts.Clock.Now()
	last, due, next := c.reports.due(cluster, now, c.opts.ReportInterval)
	at := now
	if !due {
		// Lists changed within the interval carry the time of the last write: a sync that runs again before the
		// source's cache shows that write sends the same patch, which patchSourceOnce does not repeat.
		at = last
	}
	patch := mirror.StepPatch(src, steps, c.hubsReport(at), due)
	if err := c.patchSourceOnce(ctx, source, k, key, src, patch, "publishing the hubs in step"); err != nil {
		return err
	}
	if patch != nil && due {
		c.reports.wrote(cluster, now)
		next = c.opts.ReportInterval
	}
	c.queue.AddAfter(key, next)
	return nil
}

// hubsReport is the value of mirror.AnnotationHubsReported written at now.
func (c *Controller) hubsReport(now time.Time) string {
	return failoverv1alpha1.HubsReport{Writer: c.opts.ReportWriter, Time: now, Every: c.opts.ReportInterval}.String()
}

// reportTimes is when this controller last wrote a new time in each cluster's in-step report, on its own clock:
// recorded by publishSteps, forgotten when the cluster stops being replicated (reportUnreplicated, standDown). A
// controller that just started has written none: its first sync of each cluster writes it.
type reportTimes struct {
	mu sync.Mutex
	at map[string]time.Time // cluster → when
}

// due returns when cluster's report time was last written (zero: never) and whether it must be written again at
// now to keep it confirmed every every; when it need not, next is how long until it must.
func (r *reportTimes) due(cluster string, now time.Time, every time.Duration) (last time.Time, due bool, next time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.at[cluster]
	if !ok {
		return last, true, every
	}
	if wait := last.Add(every).Sub(now); wait > 0 {
		return last, false, wait
	}
	return last, true, every
}

// wrote records that cluster's report was written at at.
func (r *reportTimes) wrote(cluster string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = map[string]time.Time{}
	}
	r.at[cluster] = at
}

// forget drops cluster (no longer replicated, or gone): its next report is written at once.
func (r *reportTimes) forget(cluster string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.at, cluster)
}
