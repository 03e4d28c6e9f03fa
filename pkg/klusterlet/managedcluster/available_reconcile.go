package managedcluster

import (
	"context"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// maxHealthMessageLength bounds, in bytes, a condition message that quotes the spoke API server's answer.
const maxHealthMessageLength = 1024

// availableReconciler sets ManagedClusterConditionAvailable from the spoke API server's
// health: GET /livez, and GET /healthz when /livez answers 404 or 403 (API servers older
// than 1.16, or RBAC without /livez). It runs on the periodic sync and on its own fast
// re-checks only. A failure changes nothing until `threshold` consecutive checks failed
// (isolated failures do not flip the condition, FC-11); below the threshold it schedules a
// re-check after retryInterval.
type availableReconciler struct {
	discovery     discovery.DiscoveryInterface
	threshold     int
	retryInterval time.Duration
	timeout       time.Duration

	checked  bool
	failures int
}

func (r *availableReconciler) reconcile(ctx context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster) (reconcileState, error) {
	if r.checked && !sc.periodic && sc.key != healthCheckKey {
		return reconcileContinue, nil
	}
	// Only a sync whose status write succeeded counts as checked: if the write fails (e.g. a 409 against the hub
	// controller), the retry must check and set Available again instead of waiting for the next period.
	sc.onSuccess = append(sc.onSuccess, func() { r.checked = true })

	condition := r.checkSpokeHealth(ctx)
	if condition.Status == metav1.ConditionTrue {
		r.failures = 0
		sc.spokeHealthy = true
		setCondition(cluster, condition, sc.now)
		return reconcileContinue, nil
	}

	r.failures++
	if r.failures >= r.threshold {
		setCondition(cluster, condition, sc.now)
		return reconcileContinue, nil
	}
	sc.logger.Info("Spoke kube-apiserver health check failed; re-checking before changing the Available condition",
		"failures", r.failures, "threshold", r.threshold, "retryAfter", r.retryInterval, "reason", condition.Reason, "message", condition.Message)
	sc.syncCtx.Queue().AddAfter(healthCheckKey, r.retryInterval)
	return reconcileContinue, nil
}

// checkSpokeHealth probes the spoke API server and returns the resulting Available
// condition (without transition time).
func (r *availableReconciler) checkSpokeHealth(ctx context.Context) metav1.Condition {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	path := "/livez"
	statusCode, result := r.get(ctx, path)
	if statusCode == http.StatusNotFound || statusCode == http.StatusForbidden {
		path = "/healthz"
		statusCode, result = r.get(ctx, path)
	}
	if statusCode == http.StatusOK {
		return metav1.Condition{
			Type:    clusterv1.ManagedClusterConditionAvailable,
			Status:  metav1.ConditionTrue,
			Reason:  ConditionReasonManagedClusterAvailable,
			Message: "Managed cluster is available",
		}
	}

	detail := ""
	if err := result.Error(); err != nil {
		detail = err.Error()
	} else if body, _ := result.Raw(); len(body) > 0 {
		detail = string(body)
	}
	condition := metav1.Condition{
		Type:    clusterv1.ManagedClusterConditionAvailable,
		Status:  metav1.ConditionFalse,
		Reason:  ConditionReasonManagedClusterKubeAPIServerUnavailable,
		Message: text.Truncate(fmt.Sprintf("The spoke kube-apiserver is not healthy: GET %s returned status code %d: %s", path, statusCode, detail), maxHealthMessageLength),
	}
	if statusCode == http.StatusUnauthorized {
		condition.Reason = ConditionReasonManagedClusterSpokeCredentialsRejected
		condition.Message = text.Truncate(fmt.Sprintf("The spoke kube-apiserver rejected the agent's spoke credentials: GET %s returned status code %d: %s", path, statusCode, detail), maxHealthMessageLength)
	}
	return condition
}

func (r *availableReconciler) get(ctx context.Context, path string) (int, rest.Result) {
	statusCode := 0
	result := r.discovery.RESTClient().Get().AbsPath(path).Do(ctx).StatusCode(&statusCode)
	return statusCode, result
}
