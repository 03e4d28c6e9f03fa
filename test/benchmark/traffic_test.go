//go:build bench

package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// churnNamespace holds the pods created and deleted during the traffic window.
	churnNamespace = "churn"
	// churnNode is the Node whose allocatable changes during the traffic window.
	churnNode = "churn-node"
	// podChurnPeriod is how often a pod is created (and the previous one deleted) during the window.
	podChurnPeriod = 15 * time.Second
	// allocatableChurnPeriod is how often churnNode's allocatable memory flips between two values.
	allocatableChurnPeriod = 60 * time.Second
)

// runTraffic runs both agents at once on the hub, lets them settle, then counts, from the hub apiserver's audit
// log, each agent's requests and writes during the window while pods churn and a node's allocatable changes on
// the spoke.
func (b *bench) runTraffic(t *testing.T, hub *framework.Hub, spoke *framework.Spoke) {
	util.InstallFailoverConfigCRD(t, spoke)
	if hub.AuditLogPath() == "" {
		t.Fatal("the hub has no audit log")
	}
	if err := b.prepareChurn(spoke); err != nil {
		t.Fatal(err)
	}
	agents := map[agentKind]*agentProc{}
	for _, kind := range order(0) {
		name := "traffic-" + string(kind)
		agents[kind] = b.startAgent(t, agentConfig{kind: kind, cluster: name, namespace: name, spoke: spoke,
			bootstraps: [][]byte{hub.BootstrapKubeconfig()}})
	}
	for kind, a := range agents {
		if _, err := waitAvailable(b.ctx, hub, a, joinTimeout); err != nil {
			b.recordTrafficMissing(kind, err.Error())
			t.Fatal(err)
		}
	}
	if err := b.sleep(b.trafficSettle); err != nil {
		t.Fatal("interrupted")
	}
	cpuStart := map[agentKind]float64{}
	for kind, a := range agents {
		cpuStart[kind], _ = cpuSeconds(a.pid())
	}
	windowStart := time.Now()
	churnCtx, stopChurn := context.WithCancel(b.ctx)
	churnDone := make(chan error, 1)
	go func() { churnDone <- b.churn(churnCtx, spoke) }()
	sleepErr := b.sleep(b.trafficWindow)
	windowEnd := time.Now()
	stopChurn()
	churnErr := <-churnDone
	if sleepErr != nil {
		t.Fatal("interrupted")
	}
	if churnErr != nil {
		t.Fatalf("churn on the spoke: %v", churnErr)
	}
	scale := time.Hour.Seconds() / windowEnd.Sub(windowStart).Seconds()
	restarted := map[agentKind]bool{}
	for kind, a := range agents {
		restarted[kind] = a.restarts() > 0
		if restarted[kind] {
			b.recordTrafficMissing(kind, fmt.Sprintf("the %s agent process exited during the run (log %s)", kind, a.logPath))
		}
		if err := a.dead(); err != nil {
			b.recordTrafficMissing(kind, err.Error())
			continue
		}
		if cpu, err := cpuSeconds(a.pid()); err == nil && !restarted[kind] {
			b.rep.add("traffic_agent_cpu", kind, (cpu-cpuStart[kind])*scale)
		}
	}
	for _, a := range agents {
		a.stop()
	}

	if data, err := os.ReadFile(hub.AuditLogPath()); err == nil { // keep it with the logs, as evidence
		_ = os.WriteFile(filepath.Join(b.logDir, "hub-audit.log"), data, 0o600)
	}
	counts, err := countAudit(hub.AuditLogPath(), windowStart, windowEnd, map[string]agentKind{
		"system:open-cluster-management:traffic-ours": ours, "system:open-cluster-management:traffic-ocm": ocm,
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]*breakdownRow{}
	for kind, c := range counts.byAgent {
		if restarted[kind] {
			continue
		}
		b.rep.add("traffic_requests", kind, float64(c.requests)*scale)
		b.rep.add("traffic_writes", kind, float64(c.writes)*scale)
		b.rep.add("traffic_noop_writes", kind, float64(c.noopWrites)*scale)
		for req, n := range c.byRequest {
			row := rows[req]
			if row == nil {
				row = &breakdownRow{Request: req}
				rows[req] = row
			}
			if kind == ours {
				row.Ours = float64(n) * scale
			} else {
				row.OCM = float64(n) * scale
			}
		}
		t.Logf("%s: %d requests, %d writes (%d change nothing) in %s", kind, c.requests, c.writes, c.noopWrites,
			windowEnd.Sub(windowStart).Round(time.Second))
		if w := summarize(c.watchSeconds); w != nil {
			b.rep.note("traffic_requests", "%s: the %d watch requests that ended while the agent ran lasted %.0f s median "+
				"(%.0f–%.0f s); client-go asks for 5–10 min, so a short watch is ended early by the client or the server",
				kind, w.N, w.Median, w.Min, w.Max)
		}
	}
	breakdown := make([]breakdownRow, 0, len(rows))
	for _, row := range rows {
		breakdown = append(breakdown, *row)
	}
	sort.Slice(breakdown, func(i, j int) bool {
		a, c := breakdown[i], breakdown[j]
		if a.Ours+a.OCM != c.Ours+c.OCM {
			return a.Ours+a.OCM > c.Ours+c.OCM
		}
		return a.Request < c.Request
	})
	b.rep.setTraffic(breakdown) // under the report's lock: the failover scenario writes the report meanwhile
	if counts.bootstrap > 0 {
		b.rep.note("traffic_requests", "%d requests by the bootstrap user during the window are in neither agent's count "+
			"(both agents share that user)", counts.bootstrap)
	}
	b.rep.note("traffic_noop_writes", "a write changes nothing when the hub answers a successful update or patch with the "+
		"resourceVersion the object already had (the audit log records every write with its response, so the previous "+
		"resourceVersion of each object is known)")
	b.rep.method(scenarioTraffic, "Both agents run at the same time on the hub of scenario 1 (each with its own cluster name; "+
		"the spoke is the one of scenario 4 when it ran, with its Secrets and Nodes), default periods for both (status "+
		"resync --cluster-healthcheck-period 1m, lease every 60-75 s: both jitter it by up to 25 %%). After both were Available and %s more passed, the "+
		"hub apiserver's audit log (policy: every write with request and response, every other request of an agent or "+
		"bootstrap identity at Metadata level) is counted over a %s window and scaled ×%.1f to an hour; requests are "+
		"attributed to an agent by its hub identity's group system:open-cluster-management:<cluster>. A request is "+
		"counted once (by audit ID), when it was received in the window; watches opened before the window are not "+
		"counted, watches (re)opened in it are. During the window, on the spoke, a pod is created and the previous one "+
		"deleted every %s in namespace %s, and Node %s's allocatable memory flips between 15Gi and 16Gi every %s. "+
		"One window (n=1): the counts are near-deterministic, their noise comes from timer phases. The failover "+
		"and scale scenarios (when enabled) run meanwhile on their own hubs and spokes on the same machine: the "+
		"agents' request counts come from their own timers, their CPU time can only grow with the load.",
		b.trafficSettle, b.trafficWindow, scale, podChurnPeriod, churnNamespace, churnNode, allocatableChurnPeriod)
}

func (b *bench) recordTrafficMissing(kind agentKind, reason string) {
	for _, id := range []string{"traffic_requests", "traffic_writes", "traffic_noop_writes", "traffic_agent_cpu"} {
		b.rep.missing(id, kind, reason)
	}
}

// prepareChurn creates the churn namespace and Node.
func (b *bench) prepareChurn(spoke *framework.Spoke) error {
	if err := createNamespace(b.ctx, spoke, churnNamespace); err != nil {
		return err
	}
	_, err := spoke.Kube.CoreV1().Nodes().Create(b.ctx, benchNode(churnNode), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Node %s: %w", churnNode, err)
	}
	return nil
}

// churn creates a pod and deletes the previous one every podChurnPeriod and flips churnNode's allocatable
// memory every allocatableChurnPeriod, until ctx ends.
func (b *bench) churn(ctx context.Context, spoke *framework.Spoke) error {
	podTick := time.NewTicker(podChurnPeriod)
	defer podTick.Stop()
	nodeTick := time.NewTicker(allocatableChurnPeriod)
	defer nodeTick.Stop()
	pods, flips := 0, 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-podTick.C:
			name := fmt.Sprintf("churn-%04d", pods)
			_, err := spoke.Kube.CoreV1().Pods(churnNamespace).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: churnNamespace},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			}, metav1.CreateOptions{})
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("creating pod %s: %w", name, err)
			}
			if pods > 0 {
				prev := fmt.Sprintf("churn-%04d", pods-1)
				if err := spoke.Kube.CoreV1().Pods(churnNamespace).Delete(ctx, prev, metav1.DeleteOptions{}); err != nil && ctx.Err() == nil {
					return fmt.Errorf("deleting pod %s: %w", prev, err)
				}
			}
			pods++
		case <-nodeTick.C:
			memory := "16Gi"
			if flips%2 == 0 {
				memory = "15Gi"
			}
			flips++
			patch := fmt.Sprintf(`{"status":{"allocatable":{"memory":%q}}}`, memory)
			if _, err := spoke.Kube.CoreV1().Nodes().Patch(ctx, churnNode, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil && ctx.Err() == nil {
				return fmt.Errorf("patching the allocatable of Node %s: %w", churnNode, err)
			}
		}
	}
}

// auditEvent is the part of an audit.k8s.io/v1 Event the counts need.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	Verb    string `json:"verb"`
	User    struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestObject            *objectMeta `json:"requestObject"`
	ResponseObject           *objectMeta `json:"responseObject"`
	RequestReceivedTimestamp time.Time   `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time   `json:"stageTimestamp"`
}

// objectMeta is the metadata of a request or response object in an audit event.
type objectMeta struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

// agentCounts are one agent's requests in the window.
type agentCounts struct {
	requests, writes, noopWrites int
	byRequest                    map[string]int
	// watchSeconds are the durations of the agent's watch requests that ended before the end of the window
	// (the agents are stopped after it), anywhere in the log.
	watchSeconds []float64
}

// auditCounts are the counts of countAudit.
type auditCounts struct {
	byAgent map[agentKind]*agentCounts
	// bootstrap counts requests of bootstrap users in the window (not attributable to an agent).
	bootstrap int
}

// countAudit counts, per agent (groups maps an agent's hub group to its kind), the requests received in
// [from, to) in the audit log file, once per audit ID, and finds the writes that changed nothing.
func countAudit(file string, from, to time.Time, groups map[string]agentKind) (*auditCounts, error) {
	events, ids, err := readAuditLog(file)
	if err != nil {
		return nil, err
	}
	// Writes in completion order, to know each object's resourceVersion before a write.
	ordered := make([]*auditEvent, 0, len(ids))
	for _, id := range ids {
		ordered = append(ordered, events[id])
	}
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].StageTimestamp.Before(ordered[j].StageTimestamp) })
	lastRV := map[string]string{}
	res := &auditCounts{byAgent: map[agentKind]*agentCounts{}}
	for _, k := range groups {
		res.byAgent[k] = &agentCounts{byRequest: map[string]int{}}
	}
	for _, ev := range ordered {
		noop := false
		if isWrite(ev.Verb) && ev.ObjectRef != nil && ev.ResponseStatus != nil && ev.ResponseStatus.Code/100 == 2 &&
			ev.ResponseObject != nil {
			key := strings.Join([]string{ev.ObjectRef.APIGroup, ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name}, "/")
			rv := ev.ResponseObject.Metadata.ResourceVersion
			if ev.Verb == "update" || ev.Verb == "patch" {
				if prev, ok := lastRV[key]; ok && prev == rv {
					noop = true
				}
				if ev.Verb == "update" && ev.RequestObject != nil && ev.RequestObject.Metadata.ResourceVersion == rv {
					noop = true
				}
			}
			if rv != "" {
				lastRV[key] = rv
			}
		}
		var kind agentKind
		attributed := false
		for _, g := range ev.User.Groups {
			if k, ok := groups[g]; ok {
				kind, attributed = k, true
				break
			}
		}
		if attributed && ev.Verb == "watch" && ev.Stage == "ResponseComplete" && ev.StageTimestamp.Before(to) {
			c := res.byAgent[kind]
			c.watchSeconds = append(c.watchSeconds, ev.StageTimestamp.Sub(ev.RequestReceivedTimestamp).Seconds())
		}
		if ev.RequestReceivedTimestamp.Before(from) || !ev.RequestReceivedTimestamp.Before(to) {
			continue
		}
		if !attributed {
			if strings.HasPrefix(ev.User.Username, framework.BootstrapUserPrefix) {
				res.bootstrap++
			}
			continue
		}
		c := res.byAgent[kind]
		c.requests++
		if isWrite(ev.Verb) {
			c.writes++
			if noop {
				c.noopWrites++
			}
		}
		c.byRequest[requestName(ev)]++
	}
	return res, nil
}

// readAuditLog reads the audit log file: the last stage of every request by audit ID (ResponseComplete or Panic
// after ResponseStarted), and the audit IDs in the order they first appear.
func readAuditLog(file string) (map[string]*auditEvent, []string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the audit log: %w", err)
	}
	defer f.Close()
	events := map[string]*auditEvent{}
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, nil, fmt.Errorf("parsing the audit log %s: %w", file, err)
		}
		prev, seen := events[ev.AuditID]
		if !seen {
			ids = append(ids, ev.AuditID)
		}
		if !seen || prev.Stage == "ResponseStarted" {
			e := ev
			events[ev.AuditID] = &e
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading the audit log %s: %w", file, err)
	}
	return events, ids, nil
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// requestName names a request for the breakdown, e.g. "patch managedclusters/status" or "watch leases".
func requestName(ev *auditEvent) string {
	if ev.ObjectRef == nil {
		return ev.Verb + " (non-resource)"
	}
	res := ev.ObjectRef.Resource
	if ev.ObjectRef.Subresource != "" {
		res += "/" + ev.ObjectRef.Subresource
	}
	name := ev.Verb + " " + res
	if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
		name += fmt.Sprintf(" (HTTP %d)", ev.ResponseStatus.Code)
	}
	return name
}
