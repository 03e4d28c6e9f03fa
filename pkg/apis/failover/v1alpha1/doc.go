// Package v1alpha1 holds the FailoverConfig API, group failover.open-cluster-management.io, version v1alpha1.
//
// A FailoverConfig lives in the agent's namespace and lists the alternate hubs a managed cluster may move to
// when its active OCM hub is lost or rejects it, together with the timings of that decision, a planned switch
// and a failback policy. Its status reports the active hub, the result of the standby probe of every hub and
// the last failover. The primary hub is not listed: it comes from the agent's --bootstrap-kubeconfig and is
// always named "primary" (HubNamePrimary).
//
// The CRD (manifests/crd) validates the same rules as ValidateFailoverConfig, except that it checks only the
// form of switchTo: the hubs the agent has from bootstrap kubeconfig files, which switchTo may name, are known to
// the agent alone. WithDefaults gives the effective durations of a spec whose optional fields were left empty.
//
// +kubebuilder:object:generate=true
// +groupName=failover.open-cluster-management.io
package v1alpha1
