// Package fence builds what keeps users from changing a managed cluster's state on a hub that is not the
// cluster's source: a ValidatingAdmissionPolicy (Kubernetes' own admission in CEL, GA since 1.30; no webhook
// server) and its binding, which the replicator installs on every hub, and the marks it keeps on each
// cluster's namespace there.
//
// The rules the policy enforces on a hub named H, for a request of any user other than the replicator itself
// (its username on H) and the managed clusters' agents (group GroupManagedClusters):
//   - In a cluster namespace marked with LabelClusterHub (the replicator marks it on every hub except the
//     cluster's source, and removes the mark on the source): creating, deleting or changing the spec of a
//     ManifestWork, ManagedClusterAddOn, ManagedServiceAccount or ClusterPermission, or the data of a Secret or
//     ConfigMap labelled cluster.open-cluster-management.io/backup, or the fields of a custom kind
//     (FencedCustomKinds), is refused. Not fenced, as the replicator never mirrors them: the ManifestWorks a hub
//     generates (mirror.Excluded: labelled mirror.AddonNameLabel or mirror.ManifestWorkReplicaSetLabel, or
//     controlled by a ClusterPermission, before and after the request), a custom kind's generated objects,
//     and a ManagedClusterAddOn whose controller is a ClusterManagementAddOn,
//     unless the object was a copy: the add-on manager's install strategy creates it so, and OCM's addonowner
//     controller gives that ownerReference to every ManagedClusterAddOn of an add-on the manager manages, so
//     on a hub that is not the cluster's source this leaves only the copies fenced. A delete while the
//     namespace itself is being deleted is allowed.
//   - A ManagedCluster that carries mirror.AnnotationClusterHub (every copy on a hub that is not the
//     cluster's source): a change of spec.hubAcceptsClient, spec.leaseDurationSeconds or
//     spec.managedClusterClientConfigs is refused. Taints are left to each hub's controllers.
//   - Label LabelUnfenced = "true" on the cluster's namespace lifts the fence for the namespaced objects, on
//     the ManagedCluster for its spec, on that hub: the emergency override. The replicator never sets or
//     removes it.
//
// The refusal's message names the cluster, the hub it is managed from, since when, and this hub.
package fence

import (
	"fmt"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

const (
	// PolicyName is the name of the ValidatingAdmissionPolicy and of its binding on every hub.
	PolicyName = "klusterlet-failover-fence"
	// LabelClusterHub, on a cluster's namespace on a hub, is the name of the hub the cluster is managed from
	// (its source) when that is another hub; absent on the source. The namespace also carries
	// mirror.AnnotationClusterHub and mirror.AnnotationClusterHubSince, as the ManagedCluster's copies do.
	LabelClusterHub = "failover.open-cluster-management.io/cluster-hub"
	// LabelUnfenced = "true" on a cluster's namespace or ManagedCluster lifts the fence for that cluster on
	// that hub (set by a user in an emergency; the replicator leaves it alone).
	LabelUnfenced = "failover.open-cluster-management.io/unfenced"
	// GroupManagedClusters is the group of every managed cluster agent's hub identity (OCM's registration:
	// the client certificate's organization). Their writes follow the cluster and are never fenced.
	GroupManagedClusters = "system:open-cluster-management:managed-clusters"
)

// Resources of the policy API (admissionregistration.k8s.io/v1) and of SelfSubjectReview, which tells the
// replicator its username on a hub.
var (
	PolicyGVR            = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	BindingGVR           = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
	SelfSubjectReviewGVR = schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}
)

// Policy returns the ValidatingAdmissionPolicy for the hub named hub (ReplicationConfig spec.hubs[].name),
// exempting replicatorUser, the replicator's username on that hub (from a SelfSubjectReview). Of kinds, the
// kinds replicated, the built-in kinds of a cluster's namespace (ManifestWork, ManagedClusterAddOn,
// ManagedServiceAccount, ClusterPermission, backup Secrets and ConfigMaps) are fenced when they are among them,
// and those of the ReplicationConfig's spec.customKinds that live in a cluster's namespace (FencedCustomKinds)
// too, with their fields and generated labels; the ManagedCluster always. It returns an error when hub or
// replicatorUser is empty or replicatorUser holds a character that cannot be quoted in CEL.
func Policy(hub, replicatorUser string, kinds []mirror.Kind) (*admissionregistrationv1.ValidatingAdmissionPolicy, error) {
	if hub == "" {
		return nil, fmt.Errorf("fence: hub name is empty")
	}
	if replicatorUser == "" {
		return nil, fmt.Errorf("fence: the replicator's username on hub %s is empty", hub)
	}
	user, err := celString(replicatorUser)
	if err != nil {
		return nil, fmt.Errorf("fence: the replicator's username on hub %s: %w", hub, err)
	}
	hubLiteral, err := celString(hub)
	if err != nil {
		return nil, fmt.Errorf("fence: hub name: %w", err)
	}
	fail := admissionregistrationv1.Fail
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	rule := func(group string, versions []string, ops []admissionregistrationv1.OperationType, resources ...string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: versions, Resources: resources},
		}}
	}
	// The ManagedCluster always (a cluster's copy is marked only when ManagedClusters are replicated); the
	// built-in kinds of a cluster's namespace when they are replicated.
	rules := []admissionregistrationv1.NamedRuleWithOperations{
		rule("cluster.open-cluster-management.io", []string{"*"}, []admissionregistrationv1.OperationType{admissionregistrationv1.Update}, "managedclusters"),
	}
	replicated := func(name failoverv1alpha1.ReplicatedKind) bool {
		return slices.ContainsFunc(kinds, func(k mirror.Kind) bool { return k.Name == name })
	}
	for _, name := range []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManifestWork, failoverv1alpha1.KindManagedClusterAddOn,
		failoverv1alpha1.KindManagedServiceAccount, failoverv1alpha1.KindClusterPermission, failoverv1alpha1.KindSecret, failoverv1alpha1.KindConfigMap} {
		if k, _ := mirror.KindByName(name); replicated(name) {
			versions := []string{"*"}
			if k.GVR.Group == "" {
				versions = []string{"v1"}
			}
			rules = append(rules, rule(k.GVR.Group, versions, all, k.GVR.Resource))
		}
	}
	// A custom kind: its resource matched, its generated objects let through, a change of its fields changes
	// what the spoke gets.
	generatedCustom, customChanges := []string{"false"}, ""
	for _, k := range FencedCustomKinds(kinds) {
		rules = append(rules, rule(k.GVR.Group, []string{"*"}, all, k.GVR.Resource))
		is := fmt.Sprintf("(request.resource.group == '%s' && request.resource.resource == '%s')", k.GVR.Group, k.GVR.Resource)
		if len(k.Generated.Labels) > 0 {
			generatedCustom = append(generatedCustom, is+" && (object == null || "+anyLabel(k.Generated.Labels, "variables.newLabels")+
				") && (oldObject == null || "+anyLabel(k.Generated.Labels, "variables.oldLabels")+")")
		}
		var changed []string
		for _, f := range k.Fields {
			changed = append(changed, fmt.Sprintf("object[?'%[1]s'] != oldObject[?'%[1]s']", f))
		}
		customChanges += is + " ? (" + strings.Join(changed, " || ") + ") : "
	}
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: PolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: rules,
				// Namespaced requests only in the namespaces of clusters managed from another hub that are not
				// unfenced; cluster-scoped requests (ManagedClusters) are never skipped by a namespace selector.
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: LabelClusterHub, Operator: metav1.LabelSelectorOpExists},
					{Key: LabelUnfenced, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{
				{Name: "not-the-replicator", Expression: "request.userInfo.username != " + user},
				{Name: "not-a-managed-cluster-agent", Expression: fmt.Sprintf("!has(request.userInfo.groups) || !(%q in request.userInfo.groups)", GroupManagedClusters)},
			},
			Variables: []admissionregistrationv1.Variable{
				{Name: "isCluster", Expression: "request.resource.group == 'cluster.open-cluster-management.io' && request.resource.resource == 'managedclusters'"},
				{Name: "backupKind", Expression: "request.resource.group == '' && request.resource.resource in ['secrets', 'configmaps']"},
				// The labels of the object before and after the request: a kind that is fenced on either side is
				// fenced (a change that also adds the add-on label, or drops the backup label, is still refused).
				{Name: "newLabels", Expression: "object != null && has(object.metadata.labels) ? object.metadata.labels : {}"},
				{Name: "oldLabels", Expression: "oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"},
				{Name: "generatedWork", Expression: "request.resource.group == 'work.open-cluster-management.io' && request.resource.resource == 'manifestworks' && " +
					"(object == null || " + generatedWork("object", "variables.newLabels") + ") && " +
					"(oldObject == null || " + generatedWork("oldObject", "variables.oldLabels") + ")"},
				// A ManagedClusterAddOn whose controller is its ClusterManagementAddOn (as the add-on manager's
				// install strategy makes it, and its addonowner controller adopts others) and that was no copy.
				{Name: "installedAddOn", Expression: fmt.Sprintf("request.resource.group == 'addon.open-cluster-management.io' && request.resource.resource == 'managedclusteraddons' && "+
					"(object == null || (has(object.metadata.ownerReferences) && %[1]s)) && "+
					"(oldObject == null || (has(oldObject.metadata.ownerReferences) && %[2]s && !(%[3]q in variables.oldLabels)))",
					controlledByCMA("object"), controlledByCMA("oldObject"), mirror.LabelReplicatedFrom)},
				// Where the marks are: the ManagedCluster copy itself, or the cluster's namespace.
				{Name: "marks", Expression: "variables.isCluster ? (has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}) : " +
					"(has(namespaceObject.metadata.annotations) ? namespaceObject.metadata.annotations : {})"},
				{Name: "clusterHub", Expression: fmt.Sprintf("%q in variables.marks ? variables.marks[%q] : ''", mirror.AnnotationClusterHub, mirror.AnnotationClusterHub)},
				{Name: "since", Expression: fmt.Sprintf("%q in variables.marks ? variables.marks[%q] : 'an unknown time'", mirror.AnnotationClusterHubSince, mirror.AnnotationClusterHubSince)},
				{Name: "cluster", Expression: "variables.isCluster ? oldObject.metadata.name : namespaceObject.metadata.name"},
				{Name: "unfenced", Expression: fmt.Sprintf("variables.isCluster && has(oldObject.metadata.labels) && %q in oldObject.metadata.labels && oldObject.metadata.labels[%q] == 'true'", LabelUnfenced, LabelUnfenced)},
				{Name: "generatedCustom", Expression: strings.Join(generatedCustom, " || ")},
				// What is fenced: not the ManifestWorks a hub generates, an add-on manager's own
				// ManagedClusterAddOns nor a custom kind's generated objects (never mirrored: each hub makes its
				// own), and of Secrets and ConfigMaps only those the replicator mirrors.
				{Name: "fencedKind", Expression: fmt.Sprintf("variables.backupKind ? (%[1]q in variables.newLabels || %[1]q in variables.oldLabels) : "+
					"!variables.generatedWork && !variables.installedAddOn && !variables.generatedCustom", mirror.BackupLabel)},
				// Whether the request changes what the spoke gets.
				{Name: "changes", Expression: "request.operation == 'CREATE' ? true : " +
					"request.operation == 'DELETE' ? !has(namespaceObject.metadata.deletionTimestamp) : " +
					"variables.isCluster ? (object.?spec.?hubAcceptsClient != oldObject.?spec.?hubAcceptsClient || " +
					"object.?spec.?leaseDurationSeconds != oldObject.?spec.?leaseDurationSeconds || " +
					"object.?spec.?managedClusterClientConfigs != oldObject.?spec.?managedClusterClientConfigs) : " + customChanges +
					"variables.backupKind ? (object.?data != oldObject.?data || object.?binaryData != oldObject.?binaryData) : " +
					"object.?spec != oldObject.?spec"},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!variables.fencedKind || variables.clusterHub == '' || variables.clusterHub == " + hubLiteral + " || variables.unfenced || !variables.changes",
				MessageExpression: "'cluster ' + variables.cluster + ' is managed from hub ' + variables.clusterHub + ' since ' + variables.since + " +
					"'; make this change there (this hub, ' + " + hubLiteral + " + ', is not the cluster\\'s hub: " +
					"its copy is overwritten by the replicator; label " + LabelUnfenced + "=true on ' + " +
					"(variables.isCluster ? 'the ManagedCluster' : 'namespace ' + namespaceObject.metadata.name) + ' overrides in an emergency)'",
				Reason: ptr(metav1.StatusReasonForbidden),
			}},
		},
	}, nil
}

// Binding returns the ValidatingAdmissionPolicyBinding of the policy (action Deny, no parameters).
func Binding() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: PolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        PolicyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
}

// NamespaceMark returns the JSON merge patch (RFC 7386) of a cluster namespace on a hub that is not the
// cluster's source: LabelClusterHub and mirror.AnnotationClusterHub set to source, mirror.AnnotationClusterHubSince
// to since (RFC 3339, UTC). With source empty it removes the three (the namespace on the source hub).
func NamespaceMark(source string, since time.Time) map[string]any {
	if source == "" {
		return map[string]any{"metadata": map[string]any{
			"labels":      map[string]any{LabelClusterHub: nil},
			"annotations": map[string]any{mirror.AnnotationClusterHub: nil, mirror.AnnotationClusterHubSince: nil},
		}}
	}
	return map[string]any{"metadata": map[string]any{
		"labels": map[string]any{LabelClusterHub: source},
		"annotations": map[string]any{
			mirror.AnnotationClusterHub:      source,
			mirror.AnnotationClusterHubSince: since.UTC().Format(time.RFC3339),
		},
	}}
}

// FencedCustomKinds returns those of kinds that the fence covers besides the built-in ones: the custom kinds
// (ReplicationConfig spec.customKinds; not in mirror.Kinds) of a namespaced resource whose scope ties an object
// in a cluster's namespace to that cluster (ClusterByNamespace, ClusterByNamespaceIfCluster), without a label
// selector (the fence cannot tell the selected objects from the others).
func FencedCustomKinds(kinds []mirror.Kind) []mirror.Kind {
	var out []mirror.Kind
	for _, k := range kinds {
		if _, builtIn := mirror.KindByName(k.Name); builtIn || !k.Namespaced || k.LabelSelector != "" ||
			(k.Scope != mirror.ClusterByNamespace && k.Scope != mirror.ClusterByNamespaceIfCluster) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// anyLabel returns the CEL expression that is true when the map in the variable labels holds any of keys.
func anyLabel(keys []string, labels string) string {
	terms := make([]string, 0, len(keys))
	for _, l := range keys {
		terms = append(terms, fmt.Sprintf("%q in %s", l, labels))
	}
	return "(" + strings.Join(terms, " || ") + ")"
}

// generatedWork returns the CEL expression that is true when obj (a variable holding a ManifestWork), whose
// labels are in the variable labels, is one a hub generates (mirror.Excluded for ManifestWorks): it carries one
// of the kind's generated labels, or its controller is of one of its generator kinds.
func generatedWork(obj, labels string) string {
	k, _ := mirror.KindByName(failoverv1alpha1.KindManifestWork)
	var terms []string
	for _, l := range k.Generated.Labels {
		terms = append(terms, fmt.Sprintf("%q in %s", l, labels))
	}
	for _, gk := range k.Generated.ControllerKinds {
		terms = append(terms, fmt.Sprintf("(has(%[1]s.metadata.ownerReferences) && %[1]s.metadata.ownerReferences.exists(r, "+
			"r.kind == %[2]q && r.apiVersion.startsWith(%[3]q) && has(r.controller) && r.controller))", obj, gk.Kind, gk.Group+"/"))
	}
	return "(" + strings.Join(terms, " || ") + ")"
}

// controlledByCMA returns the CEL expression that is true when obj (a variable holding an object with
// metadata.ownerReferences) has a ClusterManagementAddOn as its controller.
func controlledByCMA(obj string) string {
	return obj + ".metadata.ownerReferences.exists(r, r.kind == 'ClusterManagementAddOn' && has(r.controller) && r.controller)"
}

// celString returns s as a CEL string literal (single-quoted). It refuses quotes, backslashes and control
// characters, which no Kubernetes username or hub name of ours holds.
func celString(s string) (string, error) {
	for _, r := range s {
		if r == '\'' || r == '\\' || r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%q holds %q, which cannot be quoted in a CEL expression", s, r)
		}
	}
	return "'" + s + "'", nil
}

func ptr[T any](v T) *T { return &v }
