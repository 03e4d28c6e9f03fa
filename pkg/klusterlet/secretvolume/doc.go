// Package secretvolume makes the kubelet refresh, at once, the Secret volumes of the pods that mount the hub
// kubeconfig Secret when the agent rewrites it.
//
// The kubelet updates a Secret volume only when it syncs the pod: on its syncFrequency (1 minute by default,
// plus jitter) or when the pod object changes. After a failover, OCM's work agent and every add-on read their
// hub credentials from that volume, so without help they keep talking to the lost hub for up to about a minute
// and a half. The controller here patches one annotation on each such pod: a pod update makes the kubelet sync
// the pod, and the sync remounts the volume (measured on a v1.34 kubelet: 0.5 s instead of 78 s). Nothing else of
// the pod changes; no pod is deleted or restarted by it.
//
// OCM's work agent and add-on agents exit when their hub kubeconfig changes, and the kubelet restarts them. It
// restarts a container at once only when it last restarted it more than ten minutes before; otherwise it waits 10
// s, 20 s, 40 s ... up to 5 minutes (CrashLoopBackOff), and the agent serves no hub meanwhile. For a minute after
// each annotation the controller therefore looks at those pods every 5 s and reports a container in that back-off
// with a Warning event.
package secretvolume
