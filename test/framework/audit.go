package framework

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// apiserverFlag is one extra --name=value flag for a control plane's kube-apiserver.
type apiserverFlag struct {
	name  string
	value string
}

// auditFlags writes policy (an audit.k8s.io/v1 Policy document, YAML or JSON) into a fresh t.TempDir() directory
// and returns the kube-apiserver flags that make it log the audited requests, one JSON event per line, to the
// returned file in that directory (log backend in blocking mode: an event is in the file before the response is
// sent). A nil or empty policy returns no flags and an empty path.
func auditFlags(t testing.TB, component string, policy []byte) ([]apiserverFlag, string) {
	t.Helper()
	if len(policy) == 0 {
		return nil, ""
	}
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policyFile, policy, 0o600); err != nil {
		t.Fatalf("%s: writing the audit policy %s: %v", component, policyFile, err)
	}
	logFile := filepath.Join(dir, "audit.log")
	return []apiserverFlag{
		{name: "audit-policy-file", value: policyFile},
		{name: "audit-log-path", value: logFile},
		{name: "audit-log-format", value: "json"},
		{name: "audit-log-mode", value: "blocking"},
		// No rotation: readers parse one file; the test's temp dir bounds its life. 0 would not do: the
		// apiserver's log writer (lumberjack) reads 0 as its default, and rotates at 100 MB.
		{name: "audit-log-maxsize", value: "1000000"},
	}, logFile
}

// AuditLogPath returns the file the hub's kube-apiserver writes its audit events to (JSON lines, audit.k8s.io/v1
// Event), or "" when HubOptions.AuditPolicy was empty. The file lives until the test ends; events of a stopped and
// restarted apiserver are appended to it.
func (h *Hub) AuditLogPath() string { return h.auditLogPath }

// AuditEvents returns, in log order, the final stage (ResponseComplete, or ResponseStarted for a watch still open)
// of every request of user in the hub's audit log (AuditLogPath). It fails when the hub has no audit log or a line
// is not an audit.k8s.io/v1 Event.
func (h *Hub) AuditEvents(user string) ([]auditv1.Event, error) {
	if h.auditLogPath == "" {
		return nil, fmt.Errorf("hub %s: no audit log (HubOptions.AuditPolicy is empty)", h.Name)
	}
	data, err := os.ReadFile(h.auditLogPath)
	if err != nil {
		return nil, fmt.Errorf("hub %s: reading the audit log: %w", h.Name, err)
	}
	index := map[types.UID]int{}
	var out []auditv1.Event
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev auditv1.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("hub %s: audit log %s line %d: %w", h.Name, h.auditLogPath, n+1, err)
		}
		if ev.User.Username != user {
			continue
		}
		if i, ok := index[ev.AuditID]; ok {
			if out[i].Stage != auditv1.StageResponseComplete {
				out[i] = ev
			}
			continue
		}
		index[ev.AuditID] = len(out)
		out = append(out, ev)
	}
	return out, nil
}
