package node_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// countingListener accepts and closes connections on one address and counts them.
type countingListener struct {
	l        net.Listener
	accepted atomic.Int32
}

func listenCounting(t *testing.T, addr string) *countingListener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingListener{l: l}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close() })
	return c
}

func (c *countingListener) port() string {
	_, port, _ := net.SplitHostPort(c.l.Addr().String())
	return port
}

// checkPodReachesOnlyTheAPIServers runs the connectivity probe (test/images/dial) as a pod on node and checks that
// a pod reaches the hub's apiserver and the spoke's (through the `kubernetes` Service) and nothing else this machine
// listens on at the bridge's host address, the one address of the machine a pod has a route to: neither a
// listener on that address nor one on every address. The listeners must have accepted no connection.
func checkPodReachesOnlyTheAPIServers(t *testing.T, ctx context.Context, network *framework.PodNetwork, spoke *framework.Spoke,
	node *framework.Node, hub *framework.Hub) {
	t.Helper()
	tarball, err := framework.DialImage()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.ImportImage(tarball); err != nil {
		t.Fatal(err)
	}
	hubURL, err := url.Parse(hub.DirectURL())
	if err != nil {
		t.Fatal(err)
	}
	onBridge := listenCounting(t, net.JoinHostPort(network.HostIP.String(), "0"))
	everywhere := listenCounting(t, ":0")
	must := map[string]bool{
		hubURL.Host: true,
		net.JoinHostPort(network.KubernetesServiceIP().String(), "443"): true,
		net.JoinHostPort(network.HostIP.String(), onBridge.port()):      false,
		net.JoinHostPort(network.HostIP.String(), everywhere.port()):    false,
	}
	var args []string
	for addr := range must {
		args = append(args, addr)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dial"},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{
				Name: "dial", Image: framework.DialImageRef, ImagePullPolicy: corev1.PullNever, Args: args,
			}},
		},
	}
	framework.Eventually(t, time.Minute, time.Second, func() (bool, error) {
		_, err := spoke.Kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "the probe pod created (the default ServiceAccount exists)")
	var message string
	framework.Eventually(t, 2*time.Minute, time.Second, func() (bool, error) {
		p, err := spoke.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodFailed {
			return false, errors.New("the probe pod failed")
		}
		if p.Status.Phase != corev1.PodSucceeded || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			return false, nil
		}
		message = p.Status.ContainerStatuses[0].State.Terminated.Message
		return true, nil
	}, "the probe pod succeeded")
	t.Logf("probe pod's report:\n%s", message)
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(message), "\n") {
		addr, result, _ := strings.Cut(line, " ")
		got[addr] = result == "reached"
	}
	for addr, want := range must {
		if reached, ok := got[addr]; !ok || reached != want {
			t.Errorf("a pod reached %s: %v (reported %v), want %v", addr, reached, ok, want)
		}
	}
	if n := onBridge.accepted.Load() + everywhere.accepted.Load(); n != 0 {
		t.Errorf("the host's listeners accepted %d connections from the pod, want 0", n)
	}
}
