package replicator_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// runWorkHold is the scripted schedule of the work hold (failover.WorkHold): the replicator is cut off from the
// agent's hub, whose user then edits one ManifestWork and creates another there — writes no other hub has —, and
// the hub's apiserver stops. The agent moves the cluster to the other hub, whose replication it could not
// confirm (HubReplicationUnknown), and holds OCM's work agent on the hub it left: for the eviction grace period
// and more the spoke keeps the edit and the create (without the hold the work agent applies the other hub's older
// copy and evicts the create). Once the hub is back and the replicator reaches it, the writes are written back,
// the replicator reports the hub in step, the hold ends, and a user's next edit on the cluster's new hub reaches
// the spoke. The spoke's watch must see no rollback and no delete throughout.
func (b *chaosBed) runWorkHold(t *testing.T) chaosSchedule {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := b.startScripted(t, ctx, "work-hold")
	s, works, rec, i, j, write := &sc.s, sc.works, sc.rec, sc.i, sc.j, sc.write
	edited, created := chaosPrefix+"hold-edited", chaosPrefix+"hold-created"
	write(i, "create", edited, 1)
	if got := b.settle(ctx, works); got[edited] != 1 {
		t.Fatalf("work-hold schedule: the spoke holds %v, want %s applied", got, edited)
	}
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		_, err := dyn(b.hubs[j]).Resource(workGVR).Namespace(chaosCluster).Get(ctx, edited, metav1.GetOptions{})
		return err == nil, nil
	}, "%s holds a copy of %s", b.names[j], edited)

	// The replicator loses the agent's hub: the agent can no longer count the other hub in step.
	b.replProxy[i].Cut()
	s.steps = append(s.steps, fmt.Sprintf("replicator-hub %s cut=true", b.names[i]))
	util.WaitForFailoverConfig(t, b.spoke, time.Minute, fmt.Sprintf("%s's replication unknown", b.names[j]), func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		for _, h := range fc.Status.Hubs {
			if h.Name == b.names[j] {
				return h.Replication == failoverv1alpha1.HubReplicationUnknown || h.Replication == failoverv1alpha1.HubBehind, util.DescribeFailoverStatus(fc)
			}
		}
		return false, util.DescribeFailoverStatus(fc)
	})
	write(i, "edit", edited, 2)
	write(i, "create", created, 3)
	if got := b.settle(ctx, works); got[edited] != 2 || got[created] != 3 {
		t.Fatalf("work-hold schedule: the spoke holds %v, want the edit and the create applied before the hub stops", got)
	}

	b.hubs[i].StopAPIServer()
	s.steps = append(s.steps, fmt.Sprintf("hub %s apiserver down=true", b.names[i]))
	moved := util.WaitForFailoverConfig(t, b.spoke, 2*time.Minute, "the cluster moved", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return fc.Status.ActiveHub == b.names[j] && util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
	})
	s.steps = append(s.steps, fmt.Sprintf("agent moved to %s", b.names[j]))
	s.checks++
	if !util.ConditionIs(moved, failoverv1alpha1.ConditionWorkAgentHeld, metav1.ConditionTrue) {
		s.violations = append(s.violations, fmt.Sprintf("the cluster moved to %s without holding the work agent on %s: %s", b.names[j], b.names[i], util.DescribeFailoverStatus(moved)))
	}
	// Beyond the work agent's eviction grace period: what the new hub lacks would be gone from the spoke by now.
	time.Sleep(chaosEvictionGrace + 10*time.Second)
	n, v := checkChaos(works, b.settle(ctx, works), rec.snapshot())
	s.checks, s.violations = s.checks+n, append(s.violations, v...)

	b.hubs[i].StartAPIServer()
	b.replProxy[i].Heal()
	s.steps = append(s.steps, fmt.Sprintf("hub %s apiserver down=false", b.names[i]), fmt.Sprintf("replicator-hub %s cut=false", b.names[i]))
	util.WaitForFailoverConfig(t, b.spoke, 2*replicationTimeout, "the work agent released", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return fc.Status.ActiveHub == b.names[j] && util.ConditionIs(fc, failoverv1alpha1.ConditionWorkAgentHeld, metav1.ConditionFalse), util.DescribeFailoverStatus(fc)
	})
	s.steps = append(s.steps, "work agent released")
	// The work agent follows the cluster: a write on its hub reaches the spoke.
	write(j, "edit", edited, 4)
	time.Sleep(chaosEvictionGrace + 5*time.Second)
	n, v = checkChaos(works, b.settle(ctx, works), rec.snapshot())
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	n, v = b.checkHubs(ctx, works)
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	return sc.finish()
}

// scripted is a scripted schedule under way on the bed: its record, what the user believes of its works, the
// spoke's watch, the hub the cluster was on when it began (i) and the other one (j).
type scripted struct {
	b     *chaosBed
	t     *testing.T
	ctx   context.Context
	s     chaosSchedule
	works map[string]*chaosWork
	rec   *spokeRecord
	i, j  int
	// behind is the number of the agent's HubBehind and HubReplicationUnknown warnings when it began.
	behind int
}

// startScripted begins the scripted schedule what (reported as seed 0) on the hub the cluster is on, watching the
// spoke until ctx ends. It fails the test when the cluster is on no hub.
func (b *chaosBed) startScripted(t *testing.T, ctx context.Context, what string) *scripted {
	t.Helper()
	b.seed = 0
	fc, err := util.GetFailoverConfig(b.spoke)
	if err != nil {
		t.Fatalf("the %s schedule: FailoverConfig: %v", what, err)
	}
	i := slices.Index(b.names[:], fc.Status.ActiveHub)
	if i < 0 {
		t.Fatalf("the %s schedule needs the cluster on a hub: status.activeHub %q", what, fc.Status.ActiveHub)
	}
	return &scripted{b: b, t: t, ctx: ctx, works: map[string]*chaosWork{}, rec: b.watchSpoke(ctx), i: i, j: 1 - i,
		behind: warnings(util.EventReasons(t, b.spoke))}
}

// write is a user's write on hub h: a create of name, or an edit (read and written again on a 409: the
// replicator marks the works it copies), with seq as the ConfigMap's value. It records the step and the work's
// last write, and fails the test when the write is refused.
func (sc *scripted) write(h int, op, name string, seq int) {
	t, b := sc.t, sc.b
	t.Helper()
	client := b.users[h].Resource(workGVR).Namespace(chaosCluster)
	var err error
	switch op {
	case "create":
		_, err = client.Create(sc.ctx, chaosWorkObject(t, name, seq), metav1.CreateOptions{})
	case "edit":
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := client.Get(sc.ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Object["spec"] = chaosWorkObject(t, name, seq).Object["spec"]
			_, err = client.Update(sc.ctx, cur, metav1.UpdateOptions{})
			return err
		})
	default:
		t.Fatalf("scripted write: op %q: want create or edit", op)
	}
	sc.s.steps = append(sc.s.steps, fmt.Sprintf("user %s %s seq %d on %s: %s", op, name, seq, b.names[h], outcome(err)))
	if err != nil {
		t.Fatalf("user %s %s on %s: %v", op, name, b.names[h], err)
	}
	sc.s.accepted++
	sc.works[name] = &chaosWork{seq: seq}
}

// finish counts the warnings of the schedule, clears what it left (chaosBed.reset) and returns its record.
func (sc *scripted) finish() chaosSchedule {
	sc.s.behind = warnings(util.EventReasons(sc.t, sc.b.spoke)) - sc.behind
	sc.b.reset(sc.t, sc.ctx)
	return sc.s
}
