//go:build bench

package benchmark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// scenarioPods is the memory of the registration agent as a pod on a real node, as the kubelet reports it.
const scenarioPods = "pods"

// podsCluster is the cluster of the pods scenario.
const podsCluster = "cluster-pods-bench"

// declarePodFigures declares the figures of the pods scenario.
func (b *bench) declarePodFigures() {
	b.rep.declare("pod_working_set", scenarioPods, "registration pod's container working set (kubelet /metrics/resource), steady", "MiB", "≤ 0.6× OCM's")
	b.rep.declare("pod_anon", scenarioPods, "registration pod's container anonymous memory (memory cgroup), steady", "MiB", "≤ 0.6× OCM's")
	b.rep.declare("pod_rollout_available", scenarioPods, "registration image changed → new pod Ready and the cluster Available", "s", "")
	b.rep.declare("secret_volume_delay_plain", scenarioPods, "Secret updated → file changed in a pod's Secret volume, nothing else done (the kubelet's periodic sync)", "s", "")
	b.rep.declare("secret_volume_delay_annotated", scenarioPods, "Secret updated, pod annotated at once (what the agent does) → file changed in the pod", "s", "")
}

// runPods runs the klusterlet operator as a pod on a node (framework.StartNode) with a Default-mode Klusterlet on
// one hub, and alternates spec.registrationImagePullSpec between OCM's registration image and ours: after each
// roll-out (one Ready pod of the new image, the cluster Available on the hub) and BENCH_STEADY_WAIT, it reads the
// registration container's working set from the kubelet and its anonymous memory from its memory cgroup. Both
// agents take over the same cluster and hub kubeconfig Secret, as a user switching images would.
func (b *bench) runPods(t *testing.T) {
	network := framework.StartPodNetwork(t)
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub-pods", HubController: true, Signer: framework.SignerKCM, Network: network})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{Network: network})
	node := framework.StartNode(t, spoke, framework.NodeImages(t).All()...)
	t.Cleanup(framework.RemoveNodeImages)
	op := framework.DeployKlusterletOperator(t, spoke, node, framework.KlusterletOperatorPodOptions{})
	steady := max(b.steadyWait, 30*time.Second)
	b.rep.method(scenarioPods, "The memory a node pays, for the registration agent as users run it: OCM's klusterlet operator "+
		"(installed from OCM v1.2.0's deploy/klusterlet/config) as a pod on a real node (kubelet, containerd and runc, "+
		"cgroup v1 on the machine of this run), a Default-mode Klusterlet on one hub, OCM's work image for the work agent. The Klusterlet's "+
		"registrationImagePullSpec alternates between OCM's registration image (v1.2.0) and ours, both built from "+
		"their binaries by the framework's image builder (what `make image` runs); each roll-out takes over the same "+
		"cluster and hub kubeconfig Secret. %s after the new pod is Ready and the cluster Available, the working set "+
		"is read from the kubelet's /metrics/resource (container_memory_working_set_bytes: what eviction and "+
		"`kubectl top` use) and the anonymous memory from the container's memory cgroup (memory.stat: rss on cgroup "+
		"v1, anon on v2). These are the memory figures a node pays; the memory scenario's VmRSS of processes stays "+
		"for comparison with earlier reports. %d repetitions per agent, order "+
		"swapped every repetition. The Secret volume delays come first, on the same kubelet (default syncFrequency "+
		"1 min): a pod of the pause image mounts a Secret; the Secret is updated and the time runs until the file "+
		"in the pod (read from the host through /proc/<pid>/root) has the new value, polled every 50 ms, with "+
		"nothing else done and then with the pod's annotations patched right after the update, which is what our "+
		"agent's secretvolume controller does after each switch (OCM's agent does not, so its work agent waits the "+
		"first figure). Both are the kubelet's and so are listed under both agents; %d repetitions each.", steady, b.reps, b.reps)
	b.measureSecretVolumeDelay(t, spoke, node)
	for i := 0; i < b.reps; i++ {
		for _, kind := range order(i) {
			image := framework.AgentImageRef
			if kind == ocm {
				image = framework.OCMRegistrationImageRef
			}
			ctx, cancel := context.WithTimeout(b.ctx, 5*time.Minute)
			rolled, err := b.rollRegistration(ctx, t, op, spoke, hub, image)
			if err != nil {
				cancel()
				for _, id := range []string{"pod_working_set", "pod_anon", "pod_rollout_available"} {
					b.rep.missing(id, kind, err.Error())
				}
				continue
			}
			b.rep.add("pod_rollout_available", kind, rolled.took.Seconds())
			if err := b.sleep(steady); err != nil {
				cancel()
				t.Fatal("interrupted")
			}
			ws, err := node.ContainerWorkingSet(ctx, rolled.namespace, rolled.pod, rolled.container)
			if err != nil {
				b.rep.missing("pod_working_set", kind, err.Error())
			} else {
				b.rep.add("pod_working_set", kind, ws/(1<<20))
			}
			anon, err := node.ContainerAnonymousMemory(ctx, rolled.namespace, rolled.pod, rolled.container)
			if err != nil {
				b.rep.missing("pod_anon", kind, err.Error())
			} else {
				b.rep.add("pod_anon", kind, float64(anon)/(1<<20))
			}
			t.Logf("pods: %s rep %d: pod %s rolled out and Available in %.1f s, working set %.1f MiB, anon %.1f MiB",
				kind, i, rolled.pod, rolled.took.Seconds(), ws/(1<<20), float64(anon)/(1<<20))
			cancel()
		}
	}
}

// rolledPod is the registration pod after a roll-out.
type rolledPod struct {
	namespace, pod, container string
	took                      time.Duration
}

// rollRegistration sets the Klusterlet's registration image (or, when it is set already, deletes the registration
// pod) and waits until the registration Deployment has exactly one new pod, Ready, running image, and the
// cluster is Available on hub.
func (b *bench) rollRegistration(ctx context.Context, t *testing.T, op *framework.KlusterletOperator, spoke *framework.Spoke,
	hub *framework.Hub, image string) (rolledPod, error) {
	start := time.Now()
	// The same image twice in a row (order swaps every repetition) would measure the same pod again: its pod is
	// deleted so that the ReplicaSet starts a fresh one.
	if d, err := spoke.Kube.AppsV1().Deployments(framework.DefaultAgentNamespace).Get(ctx,
		framework.RegistrationDeploymentName(framework.DefaultKlusterletName), metav1.GetOptions{}); err == nil &&
		d.Spec.Template.Spec.Containers[0].Image == image {
		pods, err := spoke.Pods(ctx, d)
		if err != nil {
			return rolledPod{}, err
		}
		for _, p := range pods {
			if err := spoke.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				return rolledPod{}, fmt.Errorf("deleting pod %s for a fresh one: %w", p.Name, err)
			}
		}
	}
	k, err := op.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		ClusterName: podsCluster, RegistrationImage: image, WorkImage: framework.OCMWorkImageRef,
		BootstrapKubeconfig: hub.BootstrapKubeconfig(),
	})
	if err != nil {
		return rolledPod{}, err
	}
	var got rolledPod
	var last string
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		d, err := spoke.Kube.AppsV1().Deployments(k.Spec.Namespace).Get(ctx, framework.RegistrationDeploymentName(k.Name), metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		pods, err := spoke.Pods(ctx, d)
		if err != nil || len(pods) != 1 {
			last = fmt.Sprintf("%d pods (%v)", len(pods), err)
			return false, nil
		}
		p := pods[0]
		if p.Spec.Containers[0].Image != image || len(p.Status.ContainerStatuses) == 0 || !p.Status.ContainerStatuses[0].Ready {
			last = fmt.Sprintf("pod %s image %s not Ready yet", p.Name, p.Spec.Containers[0].Image)
			return false, nil
		}
		if ok, err := util.ClusterAvailable(hub, podsCluster); err != nil || !ok {
			last = fmt.Sprintf("cluster not Available (%v)", err)
			return false, nil
		}
		got = rolledPod{namespace: p.Namespace, pod: p.Name, container: p.Spec.Containers[0].Name}
		return rolledOut(d), nil
	})
	if err != nil {
		return rolledPod{}, fmt.Errorf("registration image %s not rolled out: %v (last: %s); %s", image, err, last,
			spoke.DescribePods(context.Background(), k.Spec.Namespace))
	}
	got.took = time.Since(start)
	return got, nil
}

// rolledOut reports whether Deployment d's roll-out is complete.
func rolledOut(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == d.Status.Replicas &&
		d.Status.Replicas == d.Status.AvailableReplicas
}

// measureSecretVolumeDelay measures, BENCH_REPS times each, how long the kubelet takes to change the file of a
// Secret volume after the Secret is updated: with nothing else done, and with the pod's annotation patched right
// after the update (the secretvolume controller's remedy). The pod runs the pause image; the file is read from the
// host through /proc/<pid>/root. Both figures are recorded for both agents alike: they are the kubelet's, and the
// second is what our agent triggers after each switch (OCM's agent does nothing, so its work agent waits the first).
func (b *bench) measureSecretVolumeDelay(t *testing.T, spoke *framework.Spoke, node *framework.Node) {
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Minute)
	defer cancel()
	const ns, name = "default", "secret-volume-probe"
	secrets := spoke.Kube.CoreV1().Secrets(ns)
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data: map[string][]byte{"value": []byte("0")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "pause", Image: framework.PauseImageRef,
			VolumeMounts: []corev1.VolumeMount{{Name: "s", MountPath: "/s"}}}},
		Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}},
	}}
	if _, err := spoke.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var err error
		pid, err = node.ContainerPID(ctx, ns, name, "pause")
		return err == nil, nil
	}); err != nil {
		t.Fatalf("pod %s/%s not running: %v", ns, name, err)
	}
	file := filepath.Join("/proc", strconv.Itoa(pid), "root", "s", "value")
	value := 0
	for _, annotate := range []bool{false, true} {
		id := "secret_volume_delay_plain"
		if annotate {
			id = "secret_volume_delay_annotated"
		}
		for i := 0; i < b.reps; i++ {
			value++
			want := strconv.Itoa(value)
			s, err := secrets.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s.Data["value"] = []byte(want)
			if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			updated := time.Now()
			if annotate {
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"bench/secret-version":%q}}}`, want)
				if _, err := spoke.Kube.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
				data, err := os.ReadFile(file)
				return err == nil && string(data) == want, nil
			}); err != nil {
				b.rep.missing(id, ours, fmt.Sprintf("the file did not change within 5 min: %v", err))
				b.rep.missing(id, ocm, fmt.Sprintf("the file did not change within 5 min: %v", err))
				continue
			}
			took := time.Since(updated).Seconds()
			b.rep.add(id, ours, took)
			b.rep.add(id, ocm, took)
			t.Logf("pods: Secret volume refreshed in %.2f s (annotated: %v)", took, annotate)
		}
	}
	_ = spoke.Kube.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
}
