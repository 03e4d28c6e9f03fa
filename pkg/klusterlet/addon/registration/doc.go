// Package registration registers the cluster's add-ons with the active hub, with OCM's add-on registration
// contract (open-cluster-management.io/ocm v1.2.0, registration agent): for every entry of a
// ManagedClusterAddOn's status.registrations on the hub (namespace = cluster name) the agent keeps a Secret in
// the add-on's install namespace holding a certificate the hub issued for the registration's subject.
//
//   - Secret: "<addon>-hub-kubeconfig" for signer kubernetes.io/kube-apiserver-client (keys kubeconfig, tls.crt,
//     tls.key, cluster-name), "<addon>-<signer, / replaced by ->-client-cert" for other signers (tls.crt, tls.key,
//     cluster-name); written whole in one Create/Update, so every version holds one hub's credentials.
//   - Namespace: status.namespace, else spec.installNamespace, else open-cluster-management-agent-addon; on the
//     cluster hosting the agent instead of the managed cluster when the add-on carries the annotation
//     addon.open-cluster-management.io/hosting-cluster-name.
//   - CSR: fresh ECDSA P-256 key, generateName "addon-<cluster>-<addon>-", labels
//     open-cluster-management.io/cluster-name and open-cluster-management.io/addon-name, DNS name
//     "<addon>.addon.open-cluster-management.io", the registration's signer; subject from the registration, CN
//     defaulting to "system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>" and, for the
//     kube-apiserver-client signer, O to "system:open-cluster-management:cluster:<cluster>:addon:<addon>".
//   - Rotation at 20–25 % remaining lifetime; a new certificate also when the subject, the kubeconfig or the
//     issuing hub changed (after a failover the new hub re-issues).
//   - Cleanup: the Secret of a removed registration or add-on is deleted; a Secret another hub issued is never.
//
// The controller runs inside a hub session's main controllers, so it restarts on every hub switch.
package registration
