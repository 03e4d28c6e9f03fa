// Package secretvolume makes the kubelet refresh, at once, the Secret volumes of the pods that mount the hub
// kubeconfig Secret when the agent rewrites it.
//
// The kubelet updates a Secret volume only when it syncs the pod: on its syncFrequency (1 minute by default,
// plus jitter) or when the pod object changes. After a failover, OCM's work agent and every add-on read their
// hub credentials from that volume, so without help they keep talking to the lost hub for up to about a minute
// and a half. The controller here patches one annotation on each such pod: a pod update makes the kubelet sync
// the pod, and the sync remounts the volume (measured on a v1.34 kubelet: 0.5 s instead of 78 s). Nothing else of
// the pod changes; no pod is deleted or restarted by it.
package secretvolume
