package framework

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// OCM identities and hub objects, as OCM's hub registration controller v1.2.0 names them
// (open-cluster-management.io/ocm pkg/registration/hub/manifests/rbac and pkg/registration/hub/lease).
const (
	// ClusterLeaseName is the Lease in namespace <cluster> the agent renews.
	ClusterLeaseName = "managed-cluster-lease"
	// ManagedClustersGroup is the group every agent certificate carries besides its per-cluster group.
	ManagedClustersGroup = "system:open-cluster-management:managed-clusters"
	// agentSubjectPrefix prefixes the cluster name in agent users and groups.
	agentSubjectPrefix = "system:open-cluster-management:"
	// registrationClusterRole is the ClusterRole, common to all clusters, bound in each cluster namespace.
	registrationClusterRole = "open-cluster-management:managedcluster:registration"
	// hubAcceptedReason and hubDeniedReason are the reasons of the HubAcceptedManagedCluster condition.
	hubAcceptedReason = "HubClusterAdminAccepted"
	hubDeniedReason   = "HubClusterAdminDenied"
)

// AgentUser returns the user (certificate CN) of agent on cluster: system:open-cluster-management:<cluster>:<agent>.
func AgentUser(cluster, agent string) string { return agentSubjectPrefix + cluster + ":" + agent }

// AgentGroups returns the groups (certificate O) of an agent of cluster:
// system:open-cluster-management:<cluster> and ManagedClustersGroup.
func AgentGroups(cluster string) []string {
	return []string{agentSubjectPrefix + cluster, ManagedClustersGroup}
}

// AcceptCluster sets spec.hubAcceptsClient of ManagedCluster cluster to accept, like a hub admin or
// `clusteradm accept`.
//
// With HubOptions.HubController the real hub controller does the rest. Without it, AcceptCluster also does,
// once and synchronously, the minimum the hub controller would do (it never renews the lease nor watches it):
//   - accept: namespace <cluster> (label open-cluster-management.io/cluster-name); ClusterRole and
//     ClusterRoleBinding open-cluster-management:managedcluster:<cluster> letting the agent groups create/get/
//     list/watch CSRs, get/list/update/watch their ManagedCluster and update/patch its status; ClusterRole
//     open-cluster-management:managedcluster:registration (get/list/watch/update leases, events create, addon
//     status) bound in namespace <cluster> by RoleBinding
//     open-cluster-management:managedcluster:<cluster>:registration; Lease <cluster>/managed-cluster-lease
//     (created if absent, renew time now); condition HubAcceptedManagedCluster=True reason
//     HubClusterAdminAccepted.
//   - deny: the cluster ClusterRole reduced to get/list/watch on the ManagedCluster, the registration
//     RoleBinding deleted, condition HubAcceptedManagedCluster=False reason HubClusterAdminDenied.
//
// The groups bound are AgentGroups(cluster)[0] and open-cluster-management:<cluster>, as OCM binds them. The
// ManagedCluster must exist. Errors name the object.
func (h *Hub) AcceptCluster(ctx context.Context, cluster string, accept bool) error {
	if err := h.patchHubAcceptsClient(ctx, cluster, accept); err != nil {
		return err
	}
	if h.opts.HubController {
		return nil
	}
	var err error
	if accept {
		err = h.emulateAccept(ctx, cluster)
	} else {
		err = h.emulateDeny(ctx, cluster)
	}
	if err != nil {
		return fmt.Errorf("hub %s: emulating the hub controller for ManagedCluster %s: %w", h.Name, cluster, err)
	}
	return nil
}

func (h *Hub) emulateAccept(ctx context.Context, cluster string) error {
	labels := map[string]string{clusterv1.ClusterNameLabelKey: cluster}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster, Labels: labels}}
	if _, err := h.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", cluster, err)
	}
	if err := h.applyClusterRBAC(ctx, cluster, clusterRules(cluster, true)); err != nil {
		return err
	}
	if err := h.applyClusterRole(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: registrationClusterRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "update"}},
			{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"managedclusteraddons"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"managedclusteraddons/status"}, Verbs: []string{"patch", "update"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create"}},
		},
	}); err != nil {
		return err
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: registrationRoleBindingName(cluster), Namespace: cluster, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: registrationClusterRole},
		Subjects:   clusterSubjects(cluster),
	}
	if _, err := h.Kube.RbacV1().RoleBindings(cluster).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating RoleBinding %s/%s: %w", cluster, binding.Name, err)
	}
	holder := ClusterLeaseName
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterLeaseName, Namespace: cluster, Labels: labels},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: &holder,
			RenewTime:      &metav1.MicroTime{Time: time.Now()},
		},
	}
	if _, err := h.Kube.CoordinationV1().Leases(cluster).Create(ctx, lease, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Lease %s/%s: %w", cluster, ClusterLeaseName, err)
	}
	return h.setHubAccepted(ctx, cluster, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue,
		Reason: hubAcceptedReason, Message: "Accepted by hub cluster admin",
	})
}

func (h *Hub) emulateDeny(ctx context.Context, cluster string) error {
	if err := h.applyClusterRBAC(ctx, cluster, clusterRules(cluster, false)); err != nil {
		return err
	}
	name := registrationRoleBindingName(cluster)
	if err := h.Kube.RbacV1().RoleBindings(cluster).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting RoleBinding %s/%s: %w", cluster, name, err)
	}
	return h.setHubAccepted(ctx, cluster, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionFalse,
		Reason: hubDeniedReason, Message: "Denied by hub cluster admin",
	})
}

// clusterRules returns the rules of ClusterRole open-cluster-management:managedcluster:<cluster>.
func clusterRules(cluster string, accepted bool) []rbacv1.PolicyRule {
	if !accepted {
		return []rbacv1.PolicyRule{{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters"},
			ResourceNames: []string{cluster}, Verbs: []string{"get", "list", "watch"}}}
	}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
		{APIGroups: []string{"register.open-cluster-management.io"}, Resources: []string{"managedclusters/clientcertificates"}, Verbs: []string{"renew"}},
		{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters"}, ResourceNames: []string{cluster},
			Verbs: []string{"get", "list", "update", "watch"}},
		{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters/status"}, ResourceNames: []string{cluster},
			Verbs: []string{"patch", "update"}},
	}
}

// clusterSubjects returns the groups OCM binds a cluster's roles to.
func clusterSubjects(cluster string) []rbacv1.Subject {
	return []rbacv1.Subject{
		{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: agentSubjectPrefix + cluster},
		{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "open-cluster-management:" + cluster},
	}
}

func clusterRoleName(cluster string) string {
	return "open-cluster-management:managedcluster:" + cluster
}

func registrationRoleBindingName(cluster string) string {
	return "open-cluster-management:managedcluster:" + cluster + ":registration"
}

// applyClusterRBAC creates or updates ClusterRole and ClusterRoleBinding open-cluster-management:managedcluster:<cluster>.
func (h *Hub) applyClusterRBAC(ctx context.Context, cluster string, rules []rbacv1.PolicyRule) error {
	labels := map[string]string{clusterv1.ClusterNameLabelKey: cluster}
	name := clusterRoleName(cluster)
	if err := h.applyClusterRole(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   clusterSubjects(cluster),
	}
	if _, err := h.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", name, err)
	}
	return nil
}

// applyClusterRole creates role, or replaces the rules of the existing one.
func (h *Hub) applyClusterRole(ctx context.Context, role *rbacv1.ClusterRole) error {
	_, err := h.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing, err := h.Kube.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		existing.Rules = role.Rules
		_, err = h.Kube.RbacV1().ClusterRoles().Update(ctx, existing, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating ClusterRole %s: %w", role.Name, err)
	}
	return nil
}

// setHubAccepted sets condition on the status of ManagedCluster cluster.
func (h *Hub) setHubAccepted(ctx context.Context, cluster string, condition metav1.Condition) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc, err := h.Cluster.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !meta.SetStatusCondition(&mc.Status.Conditions, condition) {
			return nil
		}
		_, err = h.Cluster.ClusterV1().ManagedClusters().UpdateStatus(ctx, mc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting condition %s=%s on ManagedCluster %s: %w", condition.Type, condition.Status, cluster, err)
	}
	return nil
}
