package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// ocmKlusterletDeployDir is OCM's own install of the klusterlet operator, relative to the
// open-cluster-management.io/ocm module (v1.2.0, the module hack/tools/ocm builds from): a kustomization whose
// resources are the Klusterlet CRD, the operator's ClusterRole and binding, its namespace, ServiceAccount and
// Deployment.
const ocmKlusterletDeployDir = "deploy/klusterlet/config"

// KlusterletOperatorPodOptions configures DeployKlusterletOperator.
type KlusterletOperatorPodOptions struct {
	// Replicas is the operator Deployment's replicas. Default 1, as OCM's kustomization sets.
	Replicas int32
	// AgentReplicas, when not 0, is the operator's --deployment-replicas: the replicas of the agent Deployments it
	// renders (without it the operator renders 1 on a cluster with at most one control-plane node, else 3).
	AgentReplicas int32
}

// DeployKlusterletOperator installs the klusterlet operator on spoke's node exactly as OCM v1.2.0's
// deploy/klusterlet/config does (the resources of its kustomization, in order, with the image set to
// OCMOperatorImageRef, the kustomization's only change besides the replicas; opts may add the operator's
// --deployment-replicas), and waits until its Deployment is
// Available. The operator then runs as a pod under the ServiceAccount and ClusterRole of OCM's manifests, and the
// agent Deployments it renders get pods on the node. Failures call t.Fatal with the Deployment's state.
func DeployKlusterletOperator(t testing.TB, spoke *Spoke, node *Node, opts KlusterletOperatorPodOptions) *KlusterletOperator {
	t.Helper()
	start := time.Now()
	const name = "klusterlet-operator"
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	docs, err := ocmKlusterletManifests()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*DefaultStartTimeout)
	defer cancel()
	var deployment *appsv1.Deployment
	for _, doc := range docs {
		d, err := applyOCMManifest(ctx, spoke, doc, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d != nil {
			deployment = d
		}
	}
	if deployment == nil {
		t.Fatalf("%s: OCM's %s has no Deployment", name, ocmKlusterletDeployDir)
	}
	dyn, err := dynamic.NewForConfig(spoke.AdminConfig)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	o := &KlusterletOperator{spoke: spoke, dynamic: dyn, node: node, deployment: deployment}
	if err := o.waitDeploymentAvailable(ctx, deployment.Namespace, deployment.Name, opts.Replicas); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s: OCM's %s applied, Deployment %s/%s Available with %d replica(s) in %s", name, ocmKlusterletDeployDir,
		deployment.Namespace, deployment.Name, opts.Replicas, time.Since(start).Round(time.Millisecond))
	return o
}

// waitDeploymentAvailable waits until Deployment namespace/name has replicas updated, ready pods. The error
// describes its pods' phases, container states and the last events.
func (o *KlusterletOperator) waitDeploymentAvailable(ctx context.Context, namespace, name string, replicas int32) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		d, err := o.spoke.Kube.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("replicas %d, updated %d, ready %d, available %d", d.Status.Replicas, d.Status.UpdatedReplicas,
			d.Status.ReadyReplicas, d.Status.AvailableReplicas)
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == replicas &&
			d.Status.AvailableReplicas == replicas && d.Status.Replicas == replicas, nil
	})
	if err != nil {
		return fmt.Errorf("Deployment %s/%s not Available (%s): %v; %s", namespace, name, last, err,
			o.spoke.DescribePods(context.Background(), namespace))
	}
	return nil
}

// DescribePods returns, for the pods of namespace, their phase, each container's state and restart count, and
// the namespace's last Warning events: what a failed wait on pods says.
func (s *Spoke) DescribePods(ctx context.Context, namespace string) string {
	pods, err := s.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("(pods of %s: %v)", namespace, err)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName)
		for _, cs := range p.Status.ContainerStatuses {
			state := "unknown"
			switch {
			case cs.State.Running != nil:
				state = "running"
			case cs.State.Waiting != nil:
				state = "waiting " + cs.State.Waiting.Reason + ": " + cs.State.Waiting.Message
			case cs.State.Terminated != nil:
				state = fmt.Sprintf("terminated %s (exit %d)", cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
			}
			fmt.Fprintf(&b, "; container %s %s, ready %v, restarts %d", cs.Name, state, cs.Ready, cs.RestartCount)
		}
		b.WriteString("\n")
	}
	events, err := s.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err == nil {
		items := events.Items
		if len(items) > 10 {
			items = items[len(items)-10:]
		}
		for _, e := range items {
			fmt.Fprintf(&b, "event %s %s/%s: %s\n", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
		}
	}
	return b.String()
}

// PodLogs returns the logs of container of every pod in namespace matching selector (previous: of the last
// terminated instance), each preceded by the pod's name; read through the kubelet.
func (s *Spoke) PodLogs(ctx context.Context, namespace, selector, container string, previous bool) string {
	pods, err := s.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Sprintf("(pods %s in %s: %v)", selector, namespace, err)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		data, err := s.Kube.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, Previous: previous}).DoRaw(ctx)
		if err != nil {
			fmt.Fprintf(&b, "== %s: (logs: %v)\n", p.Name, err)
			continue
		}
		fmt.Fprintf(&b, "== %s\n%s\n", p.Name, data)
	}
	return b.String()
}

// ocmKlusterletManifests returns the YAML documents of OCM's klusterlet install, in its kustomization's order.
func ocmKlusterletManifests() ([][]byte, error) {
	dir, err := ocmModuleDir()
	if err != nil {
		return nil, err
	}
	base := filepath.Join(dir, ocmKlusterletDeployDir)
	data, err := os.ReadFile(filepath.Join(base, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("parsing %s/kustomization.yaml: %w", base, err)
	}
	var docs [][]byte
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(base, r))
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var raw runtime.RawExtension
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("parsing %s: %w", r, err)
			}
			if len(bytes.TrimSpace(raw.Raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw.Raw), []byte("null")) {
				docs = append(docs, raw.Raw)
			}
		}
	}
	return docs, nil
}

// ocmModuleDir returns the directory of the open-cluster-management.io/ocm module that hack/tools/ocm builds
// from, in the Go module cache.
func ocmModuleDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "open-cluster-management.io/ocm")
	cmd.Dir = filepath.Join(root, "hack", "tools", "ocm")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the open-cluster-management.io/ocm module (go list -m in hack/tools/ocm): %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("the open-cluster-management.io/ocm module is not in the module cache: run hack/build-test-binaries.sh")
	}
	return dir, nil
}

// applyOCMManifest creates one object of OCM's klusterlet install on the spoke and returns it when it is the
// operator's Deployment. An existing CRD, ClusterRole, binding, Namespace or ServiceAccount is left as it is; an
// existing Deployment is an error (the operator is installed once per spoke).
func applyOCMManifest(ctx context.Context, spoke *Spoke, doc []byte, opts KlusterletOperatorPodOptions) (*appsv1.Deployment, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, err
	}
	ignoreExists := func(err error) error {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	switch meta.Kind {
	case "CustomResourceDefinition":
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(doc, crd); err != nil {
			return nil, err
		}
		c, err := apiextensionsclient.NewForConfig(spoke.AdminConfig)
		if err != nil {
			return nil, err
		}
		_, err = c.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		if err := ignoreExists(err); err != nil {
			return nil, fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
		return nil, waitCRDEstablished(ctx, c, crd.Name)
	case "ClusterRole":
		o := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal(doc, o); err != nil {
			return nil, err
		}
		_, err := spoke.Kube.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		return nil, ignoreExists(err)
	case "ClusterRoleBinding":
		o := &rbacv1.ClusterRoleBinding{}
		if err := yaml.Unmarshal(doc, o); err != nil {
			return nil, err
		}
		_, err := spoke.Kube.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		return nil, ignoreExists(err)
	case "Namespace":
		o := &corev1.Namespace{}
		if err := yaml.Unmarshal(doc, o); err != nil {
			return nil, err
		}
		_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		return nil, ignoreExists(err)
	case "ServiceAccount":
		o := &corev1.ServiceAccount{}
		if err := yaml.Unmarshal(doc, o); err != nil {
			return nil, err
		}
		_, err := spoke.Kube.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		return nil, ignoreExists(err)
	case "Deployment":
		o := &appsv1.Deployment{}
		if err := yaml.Unmarshal(doc, o); err != nil {
			return nil, err
		}
		o.Spec.Replicas = &opts.Replicas
		for i := range o.Spec.Template.Spec.Containers {
			o.Spec.Template.Spec.Containers[i].Image = OCMOperatorImageRef
			o.Spec.Template.Spec.Containers[i].ImagePullPolicy = corev1.PullIfNotPresent
			if opts.AgentReplicas > 0 {
				o.Spec.Template.Spec.Containers[i].Args = append(o.Spec.Template.Spec.Containers[i].Args,
					fmt.Sprintf("--deployment-replicas=%d", opts.AgentReplicas))
			}
		}
		created, err := spoke.Kube.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("creating Deployment %s/%s: %w", o.Namespace, o.Name, err)
		}
		return created, nil
	default:
		return nil, fmt.Errorf("OCM's %s holds a %s, which the framework does not apply", ocmKlusterletDeployDir, meta.Kind)
	}
}

// waitCRDEstablished waits until CRD name is Established.
func waitCRDEstablished(ctx context.Context, c apiextensionsclient.Interface, name string) error {
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// WaitForAgentPods waits until the Deployments the operator rendered for Klusterlet k (registration and work
// agents) are Available with all their replicas, on the node, and returns them.
func (o *KlusterletOperator) WaitForAgentPods(ctx context.Context, k string, namespace string) (*AgentDeployments, error) {
	if o.node == nil {
		return nil, fmt.Errorf("klusterlet: the operator runs as a process; agent pods need DeployKlusterletOperator")
	}
	var got AgentDeployments
	for _, name := range []string{RegistrationDeploymentName(k), WorkDeploymentName(k)} {
		var d *appsv1.Deployment
		if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var err error
			d, err = o.spoke.Kube.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
			return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas > 0, nil
		}); err != nil {
			return nil, fmt.Errorf("Deployment %s/%s not rendered with replicas: %v; %s", namespace, name, err, o.spoke.DescribePods(context.Background(), namespace))
		}
		if err := o.waitDeploymentAvailable(ctx, namespace, name, *d.Spec.Replicas); err != nil {
			return nil, err
		}
		d, err := o.spoke.Kube.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if name == RegistrationDeploymentName(k) {
			got.Registration = d
		} else {
			got.Work = d
		}
	}
	return &got, nil
}

// Pods returns the pods of Deployment d (by its selector) that are not being deleted, in any phase, in the
// order the API lists them.
func (s *Spoke) Pods(ctx context.Context, d *appsv1.Deployment) ([]corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods, err := s.Kube.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// Selector returns the label selector of Deployment d as a string, for PodLogs.
func Selector(d *appsv1.Deployment) string {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return labels.Nothing().String()
	}
	return sel.String()
}
