package klusterlet_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// ourImage stands for klusterlet-failover's image in the Klusterlet's spec.registrationImagePullSpec.
	ourImage = "quay.io/klusterlet-failover/klusterlet-failover:dev"
	// failoverConnectionTimeout is the FailoverConfig's spec.hubConnectionTimeout in the MultipleHubs test (the
	// operator's --hub-connection-timeout-seconds has a minimum of 180).
	failoverConnectionTimeout = 30 * time.Second
	failoverSlack             = 90 * time.Second
	workTimeout               = 90 * time.Second
)

// runRegistrationContainer runs our binary with exactly the registration container's args and env as the
// operator rendered them (only the /spoke root remapped by LocalContainer). What a pod would give it comes as
// stand-ins: the ServiceAccount's token as --kubeconfig (the in-cluster config), its namespace as --namespace
// (the service-account namespace file) and a free --listen port.
func runRegistrationContainer(t *testing.T, ctx context.Context, spoke *framework.Spoke, lc *framework.LocalContainer, name string) *framework.AgentProcess {
	t.Helper()
	if lc.Args[0] != "/registration" || lc.Args[1] != "agent" {
		t.Fatalf("registration container args %q, want /registration agent ...", lc.Args)
	}
	saKubeconfig, err := spoke.ServiceAccountKubeconfig(ctx, lc.Namespace, lc.ServiceAccountName, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigFile := filepath.Join(t.TempDir(), "in-cluster-kubeconfig")
	if err := os.WriteFile(kubeconfigFile, saKubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(lc.Args),
		"--kubeconfig="+kubeconfigFile,
		"--namespace="+lc.Namespace,
		"--listen=127.0.0.1:"+strconv.Itoa(framework.FreeLoopbackPort(t)))
	t.Logf("running %s with the rendered args %q and env %q", name, lc.Args, lc.Env)
	return framework.StartAgentProcess(t, name, framework.AgentBinary(t), args, lc.Env...)
}

// TestKlusterletOperatorDefaultMode: the stock klusterlet operator (v1.2.0) with our image as the registration
// image and nothing else changed: our binary runs with the container's args under the operator's ServiceAccount
// and RBAC (no FailoverConfig CRD, no access to it) and the cluster is Joined and Available on the hub.
func TestKlusterletOperatorDefaultMode(t *testing.T) {
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub-default", HubController: true})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true, KlusterletCRD: true})
	operator := framework.StartKlusterletOperator(t, spoke)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	k, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		ClusterName: "cluster-default", RegistrationImage: ourImage, BootstrapKubeconfig: hub.BootstrapKubeconfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := operator.WaitForAgentDeployments(ctx, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	rendered := time.Now()
	if img := deps.Registration.Spec.Template.Spec.Containers[0].Image; img != ourImage {
		t.Fatalf("registration image %q, want ours %q", img, ourImage)
	}
	lc, err := spoke.LocalContainer(ctx, deps.Registration, "registration-controller", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	agent := runRegistrationContainer(t, ctx, spoke, lc, "registration-default")
	util.WaitForClusterAvailable(t, hub, "cluster-default", joinTimeout)
	t.Logf("measured: operator's Deployment rendered -> Available on the hub in %.1f s (Default mode; includes the agent binary's start)", time.Since(rendered).Seconds())

	// The hub kubeconfig Secret carries the keys the operator and the work agent read.
	s, err := spoke.Kube.CoreV1().Secrets(lc.Namespace).Get(ctx, framework.HubKubeconfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"kubeconfig", "tls.crt", "tls.key", "cluster-name", "agent-name"} {
		if len(s.Data[key]) == 0 {
			t.Errorf("Secret %s lacks %q", framework.HubKubeconfigSecret, key)
		}
	}
	if got := string(s.Data["cluster-name"]); got != "cluster-default" {
		t.Errorf("cluster-name %q, want cluster-default (from --spoke-cluster-name)", got)
	}
	// Without access to the FailoverConfig API (the operator grants none; RBAC answers before the missing CRD
	// would) the agent says so once and runs on the bootstrap kubeconfig.
	util.WaitForEvent(t, spoke, "FailoverConfigUnavailable", "may not list FailoverConfigs", 30*time.Second)
	if done, err := agent.Exited(); done {
		t.Fatalf("the agent exited (%v):\n%s", err, agent.LogTail(40))
	}
}

// TestKlusterletOperatorMultipleHubs: a MultipleHubs Klusterlet: the operator's ordered bootstrap kubeconfigs are
// the hub list, the FailoverConfig (CRD and the one extra RBAC manifest applied) refines the timing; the agent
// joins the first hub, OCM's work agent run from the work Deployment's args applies a ManifestWork of that
// hub; the first hub's apiserver stops; the agent fails over to the second hub, the work agent restarts on the
// new credentials and applies that hub's ManifestWork. Every version of the hub kubeconfig Secret is one hub's
// whole credentials.
func TestKlusterletOperatorMultipleHubs(t *testing.T) {
	const cluster = "cluster-multi"
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true})
	hubB := framework.StartHub(t, framework.HubOptions{Name: "hub-b", HubController: true})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true, KlusterletCRD: true})
	operator := framework.StartKlusterletOperator(t, spoke)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	k, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		ClusterName: cluster, RegistrationImage: ourImage,
		BootstrapKubeconfigs: []framework.NamedKubeconfig{
			{Name: "bootstrap-hub-a", Kubeconfig: hubA.BootstrapKubeconfig()},
			{Name: "bootstrap-hub-b", Kubeconfig: hubB.BootstrapKubeconfig()},
		},
		HubConnectionTimeoutSeconds: 180,
	})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := operator.WaitForAgentDeployments(ctx, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := spoke.LocalContainer(ctx, deps.Registration, "registration-controller", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The FailoverConfig: no alternates (the operator's list is the hub list), a 30 s connection timeout that
	// wins over the operator's 180 s.
	util.InstallFailoverConfigCRD(t, spoke)
	util.ApplyOperatorFailoverRBAC(t, ctx, spoke, lc.Namespace, lc.ServiceAccountName)
	fc := &failoverv1alpha1.FailoverConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: lc.Namespace},
		Spec: failoverv1alpha1.FailoverConfigSpec{
			HubConnectionTimeout: &metav1.Duration{Duration: failoverConnectionTimeout},
			ProbeInterval:        &metav1.Duration{Duration: 5 * time.Second},
		},
	}
	if _, err := util.FailoverClient(t, spoke).FailoverV1alpha1().FailoverConfigs(lc.Namespace).Create(ctx, fc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	versions := watchSecretVersions(t, ctx, spoke, lc.Namespace)
	agent := runRegistrationContainer(t, ctx, spoke, lc, "registration-multihub")
	util.WaitForClusterAvailable(t, hubA, cluster, joinTimeout)

	// OCM's work agent, from the work Deployment's args, reading the Secret as the kubelet would mount it.
	wdeps, err := operator.WaitForAgentDeployments(ctx, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	wlc, err := spoke.LocalContainer(ctx, wdeps.Work, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hubKubeconfigDir, ok := wlc.Mounts["/spoke/hub-kubeconfig"]
	if !ok {
		t.Fatalf("work container mounts %v, want /spoke/hub-kubeconfig", wlc.Mounts)
	}
	mirrorSecretLikeKubelet(t, ctx, spoke, lc.Namespace, framework.HubKubeconfigSecret, hubKubeconfigDir)
	agentID := ""
	for _, a := range wlc.Args {
		if v, ok := strings.CutPrefix(a, "--agent-id="); ok {
			agentID = v
		}
	}
	work := framework.StartWorkAgent(t, spoke, framework.WorkAgentOptions{
		ClusterName: cluster, HubKubeconfigDir: hubKubeconfigDir, AgentID: agentID, Namespace: lc.Namespace,
	})
	for _, a := range wlc.Args[2:] { // every rendered flag is one the work agent runs with
		if !slices.Contains(work.Args(), a) {
			t.Errorf("the work agent runs with %q, which lacks the rendered %q", work.Args(), a)
		}
	}
	util.ApplyConfigMapWork(t, ctx, hubA, cluster, "work-hub-a")
	waitConfigMap(t, ctx, spoke, "work-hub-a")

	// Hot standby, under the operator's RBAC: hub B issues the agent a certificate while it is a standby.
	util.WaitForFailoverConfig(t, spoke, failoverSlack, "bootstrap-hub-b standby credentials Ready",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			h := util.HubProbe(fc, "bootstrap-hub-b")
			return h != nil && h.StandbyCredentials != nil && h.StandbyCredentials.State == failoverv1alpha1.StandbyCredentialsReady,
				util.DescribeFailoverStatus(fc)
		})
	csrsBefore := csrCount(t, hubB, cluster)

	// Hub A is lost: the agent moves to hub B (the operator's second bootstrap kubeconfig, named after its
	// Secret) after the FailoverConfig's timeout, and the work agent follows.
	restarts := work.Restarts()
	stopped := time.Now()
	hubA.StopAPIServer()
	util.WaitForFailoverConfig(t, spoke, failoverConnectionTimeout+failoverSlack, "active hub bootstrap-hub-b and Available",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			return fc.Status.ActiveHub == "bootstrap-hub-b" && util.ConditionIs(fc, "Available", metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
		})
	util.WaitForClusterAvailable(t, hubB, cluster, failoverSlack)
	t.Logf("measured: hub A stopped -> Available on hub B in %.1f s (FailoverConfig timeout %s, operator flag 180 s)",
		time.Since(stopped).Seconds(), failoverConnectionTimeout)
	if n := csrCount(t, hubB, cluster); n != csrsBefore {
		t.Errorf("%d CSRs for %s on hub B after the switch, %d before: the switch to a hot standby sent a CSR", n, cluster, csrsBefore)
	}
	util.ApplyConfigMapWork(t, ctx, hubB, cluster, "work-hub-b")
	waitConfigMap(t, ctx, spoke, "work-hub-b")
	if work.Restarts() <= restarts {
		t.Errorf("the work agent did not restart on the new hub kubeconfig (restarts %d before, %d after)", restarts, work.Restarts())
	}
	t.Logf("measured: hub A stopped -> hub B's ManifestWork applied on the spoke in %.1f s", time.Since(stopped).Seconds())

	for i, v := range versions.list() {
		if err := v.wholeCredentialsOf(hubA, hubB); err != nil {
			t.Errorf("hub kubeconfig Secret version %d (resourceVersion %s): %v", i, v.resourceVersion, err)
		}
	}
	if done, err := agent.Exited(); done {
		t.Fatalf("the agent exited (%v):\n%s", err, agent.LogTail(40))
	}
}

// secretVersion is one observed version of the hub kubeconfig Secret.
type secretVersion struct {
	resourceVersion string
	data            map[string][]byte
}

// wholeCredentialsOf checks that the version is one hub's whole credentials: its kubeconfig names hub A or hub
// B and its certificate chains to that hub's client CA.
func (v secretVersion) wholeCredentialsOf(hubs ...*framework.Hub) error {
	server := util.KubeconfigServer(v.data["kubeconfig"])
	for _, hub := range hubs {
		if server != hub.URL() {
			continue
		}
		block, _ := pem.Decode(v.data["tls.crt"])
		if block == nil {
			return fmt.Errorf("names hub %s but tls.crt is not PEM", hub.Name)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return fmt.Errorf("names hub %s but tls.crt does not parse: %v", hub.Name, err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(hub.ClientCAData())
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			return fmt.Errorf("names hub %s but its certificate is not from that hub: %v", hub.Name, err)
		}
		return nil
	}
	return fmt.Errorf("kubeconfig server %q is none of the hubs", server)
}

// secretVersions collects what watchSecretVersions saw.
type secretVersions struct {
	mu   sync.Mutex
	seen []secretVersion
}

func (s *secretVersions) list() []secretVersion {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// watchSecretVersions records every version of the hub kubeconfig Secret in namespace until the test ends.
func watchSecretVersions(t *testing.T, ctx context.Context, spoke *framework.Spoke, namespace string) *secretVersions {
	t.Helper()
	out := &secretVersions{}
	w, err := spoke.Kube.CoreV1().Secrets(namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + framework.HubKubeconfigSecret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*corev1.Secret); ok {
				out.mu.Lock()
				out.seen = append(out.seen, secretVersion{resourceVersion: s.ResourceVersion, data: s.Data})
				out.mu.Unlock()
			}
		}
	}()
	return out
}

// mirrorSecretLikeKubelet stands in for the kubelet's Secret volume: it writes the Secret's keys into dir and
// replaces them on every change, all keys at once (the kubelet's atomic writer: a new timestamped directory,
// then the "..data" link swapped, each key a link through it), until the test ends.
func mirrorSecretLikeKubelet(t *testing.T, ctx context.Context, spoke *framework.Spoke, namespace, name, dir string) {
	t.Helper()
	write := func(s *corev1.Secret) error {
		version := filepath.Join(dir, "..version-"+s.ResourceVersion)
		if err := os.MkdirAll(version, 0o700); err != nil {
			return err
		}
		for k, v := range s.Data {
			if err := os.WriteFile(filepath.Join(version, k), v, 0o600); err != nil {
				return err
			}
		}
		tmp := filepath.Join(dir, "..data_tmp")
		_ = os.Remove(tmp)
		if err := os.Symlink(filepath.Base(version), tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			return err
		}
		for k := range s.Data {
			link := filepath.Join(dir, k)
			if target, err := os.Readlink(link); err == nil && target == filepath.Join("..data", k) {
				continue
			}
			_ = os.Remove(link)
			if err := os.Symlink(filepath.Join("..data", k), link); err != nil {
				return err
			}
		}
		return nil
	}
	s, err := spoke.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := write(s); err != nil {
		t.Fatal(err)
	}
	last := s.ResourceVersion
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		ticker := time.NewTicker(500 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
			}
			s, err := spoke.Kube.CoreV1().Secrets(namespace).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil || s.ResourceVersion == last {
				continue
			}
			if err := write(s); err != nil {
				t.Errorf("mirroring Secret %s/%s: %v", namespace, name, err)
				return
			}
			last = s.ResourceVersion
		}
	}()
}

// waitConfigMap waits until ConfigMap default/name exists on the spoke.
func waitConfigMap(t *testing.T, ctx context.Context, spoke *framework.Spoke, name string) {
	t.Helper()
	framework.Eventually(t, workTimeout, util.PollInterval, func() (bool, error) {
		_, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil, err
	}, "ConfigMap default/%s applied on the spoke by the work agent", name)
}
