package framework

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	operatorv1 "open-cluster-management.io/api/operator/v1"
)

// Names the klusterlet operator v1.2.0 uses (open-cluster-management.io/ocm pkg/operator/helpers and
// manifests/klusterlet).
const (
	// KlusterletOperatorNamespace is the operator's namespace (--namespace); it syncs image pull Secret
	// open-cluster-management-image-pull-credentials from there when that Secret exists.
	KlusterletOperatorNamespace = "open-cluster-management"
	// BootstrapHubKubeconfigSecret is the bootstrap Secret of a Default-mode Klusterlet, mounted at
	// /spoke/bootstrap; its key "kubeconfig" is the bootstrap kubeconfig.
	BootstrapHubKubeconfigSecret = "bootstrap-hub-kubeconfig"
	// HubKubeconfigSecret is the Secret the registration agent writes its hub credentials to and the work agent
	// mounts at /spoke/hub-kubeconfig.
	HubKubeconfigSecret = "hub-kubeconfig-secret"
	// KubeconfigSecretKey is the key of the kubeconfig in the bootstrap and hub kubeconfig Secrets.
	KubeconfigSecretKey = "kubeconfig"
	// DefaultKlusterletName is KlusterletOptions.Name's default, the name OCM's docs and clusteradm use.
	DefaultKlusterletName = "klusterlet"
	// DefaultRegistrationImage and DefaultWorkImage are the images KlusterletOptions defaults to for an operator
	// run as a process (StartKlusterletOperator): nothing pulls them, they only appear in the rendered
	// Deployments. On a node (DeployKlusterletOperator) ApplyKlusterlet takes only localhost/ images.
	DefaultRegistrationImage = "quay.io/open-cluster-management/registration:v1.2.0"
	DefaultWorkImage         = "quay.io/open-cluster-management/work:v1.2.0"
)

// klusterletGVR is the Klusterlet resource (cluster-scoped).
var klusterletGVR = schema.GroupVersionResource{Group: "operator.open-cluster-management.io", Version: "v1", Resource: "klusterlets"}

// RegistrationDeploymentName returns the registration agent Deployment the operator renders for Klusterlet name.
func RegistrationDeploymentName(klusterlet string) string { return klusterlet + "-registration-agent" }

// WorkDeploymentName returns the work agent Deployment the operator renders for Klusterlet name.
func WorkDeploymentName(klusterlet string) string { return klusterlet + "-work-agent" }

// KlusterletOperator is OCM's klusterlet operator (`registration-operator klusterlet`, v1.2.0) running against a
// spoke: as a process (StartKlusterletOperator; there is no kubelet, the Deployments it renders never get pods,
// and it may report the agents as unavailable or the hub connection as degraded) or as a pod on the spoke's node
// (DeployKlusterletOperator; the agent Deployments get pods).
type KlusterletOperator struct {
	spoke   *Spoke
	dynamic dynamic.Interface
	// proc is the operator process; nil when it runs as a pod.
	proc *process
	// node and deployment are the node and the operator's Deployment when it runs as a pod.
	node       *Node
	deployment *appsv1.Deployment
}

// StartKlusterletOperator installs the Klusterlet CRD on the spoke when missing, creates namespace
// KlusterletOperatorNamespace and runs `registration-operator klusterlet --kubeconfig=<spoke admin kubeconfig>
// --disable-leader-election --namespace=open-cluster-management --listen=127.0.0.1:<free port>`, waiting (up to
// DefaultStartTimeout) for its /healthz. It stops in t.Cleanup; its log is <spoke LogDir>/klusterlet-operator.log.
// Failures call t.Fatal.
func StartKlusterletOperator(t testing.TB, spoke *Spoke) *KlusterletOperator {
	t.Helper()
	start := time.Now()
	const name = "klusterlet-operator"
	binDir, err := BinariesDir(BinaryRegistrationOperator)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultStartTimeout)
	defer cancel()
	if err := ensureCRDs(ctx, spoke.AdminConfig, klusterletCRDFile); err != nil {
		t.Fatalf("%s: spoke: %v", name, err)
	}
	if err := ensureNamespace(ctx, spoke, KlusterletOperatorNamespace); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	dyn, err := dynamic.NewForConfig(spoke.AdminConfig)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	args := []string{
		"klusterlet",
		"--kubeconfig=" + spoke.KubeconfigFile(),
		"--disable-leader-election",
		"--namespace=" + KlusterletOperatorNamespace,
		"--listen=127.0.0.1:" + strconv.Itoa(port),
	}
	p, err := startProcess(name, spoke.LogDir(), filepath.Join(binDir, BinaryRegistrationOperator), args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := p.stop(stopTimeout); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
	if err := p.waitHealthy(fmt.Sprintf("https://127.0.0.1:%d/healthz", port), DefaultStartTimeout); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s started in %s, log %s", name, time.Since(start).Round(time.Millisecond), p.logPath)
	return &KlusterletOperator{spoke: spoke, dynamic: dyn, proc: p}
}

// LogPath returns the operator's log file; empty when it runs as a pod (see Spoke.PodLogs).
func (o *KlusterletOperator) LogPath() string {
	if o.proc == nil {
		return ""
	}
	return o.proc.logPath
}

// operatorLogTail returns the last lines of the operator's log, from its file or through the kubelet.
func (o *KlusterletOperator) operatorLogTail() string {
	if o.proc != nil {
		return fmt.Sprintf("log %s:\n%s", o.proc.logPath, tailFile(o.proc.logPath, logTailLines))
	}
	logs := o.spoke.PodLogs(context.Background(), o.deployment.Namespace, Selector(o.deployment), "", false)
	lines := strings.Split(strings.TrimRight(logs, "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return "operator pod log:\n" + strings.Join(lines, "\n")
}

// NamedKubeconfig is a bootstrap kubeconfig stored as Secret Name (key "kubeconfig") in the agent namespace.
type NamedKubeconfig struct {
	Name       string
	Kubeconfig []byte
}

// KlusterletOptions describes a Klusterlet CR in Default install mode and its bootstrap Secrets.
type KlusterletOptions struct {
	// Name is the Klusterlet's name; it prefixes the Deployments and ServiceAccounts. Default DefaultKlusterletName.
	Name string
	// ClusterName is spec.clusterName; required.
	ClusterName string
	// Namespace is spec.namespace, the agent namespace. Default DefaultAgentNamespace. The CRD requires it to match
	// ^open-cluster-management-[-a-z0-9]*[a-z0-9]$.
	Namespace string
	// RegistrationImage and WorkImage are spec.registrationImagePullSpec and spec.workImagePullSpec. Defaults
	// DefaultRegistrationImage and DefaultWorkImage.
	RegistrationImage, WorkImage string
	// BootstrapKubeconfig, when set, is stored as Secret BootstrapHubKubeconfigSecret: the Default (single hub)
	// bootstrap. Exclusive with BootstrapKubeconfigs.
	BootstrapKubeconfig []byte
	// BootstrapKubeconfigs, when not empty, turns on MultipleHubs: spec.registrationConfiguration.featureGates
	// gets MultipleHubs=Enable and bootstrapKubeConfigs type LocalSecrets lists these Secrets in order (each
	// stored under its Name) with HubConnectionTimeoutSeconds.
	BootstrapKubeconfigs []NamedKubeconfig
	// HubConnectionTimeoutSeconds is localSecretsConfig.hubConnectionTimeoutSeconds with BootstrapKubeconfigs;
	// 0 leaves the CRD default (600). The CRD's minimum is 180.
	HubConnectionTimeoutSeconds int32
	// Customize, when set, may change the Klusterlet before it is applied.
	Customize func(*operatorv1.Klusterlet)
}

// ApplyKlusterlet creates the agent namespace if missing, creates or replaces the bootstrap Secrets of opts, and
// creates the Klusterlet or replaces the spec of an existing one with the same name. It returns the Klusterlet as
// stored (its UID is the work agent's --agent-id). Errors name the object.
func (o *KlusterletOperator) ApplyKlusterlet(ctx context.Context, opts KlusterletOptions) (*operatorv1.Klusterlet, error) {
	if opts.ClusterName == "" {
		return nil, fmt.Errorf("klusterlet: KlusterletOptions.ClusterName is required")
	}
	if len(opts.BootstrapKubeconfig) > 0 && len(opts.BootstrapKubeconfigs) > 0 {
		return nil, fmt.Errorf("klusterlet: KlusterletOptions.BootstrapKubeconfig and BootstrapKubeconfigs are exclusive")
	}
	if opts.Name == "" {
		opts.Name = DefaultKlusterletName
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultAgentNamespace
	}
	if opts.RegistrationImage == "" {
		opts.RegistrationImage = DefaultRegistrationImage
	}
	if opts.WorkImage == "" {
		opts.WorkImage = DefaultWorkImage
	}
	if o.node != nil {
		// The node's containerd runs in the host's network namespace: an image it lacks must never be pulled.
		for field, image := range map[string]string{"RegistrationImage": opts.RegistrationImage, "WorkImage": opts.WorkImage} {
			if !strings.HasPrefix(image, "localhost/") {
				return nil, fmt.Errorf("klusterlet: KlusterletOptions.%s %q: on a node only images imported into its containerd (localhost/..., see NodeImages) may be used", field, image)
			}
		}
	}
	if err := ensureNamespace(ctx, o.spoke, opts.Namespace); err != nil {
		return nil, err
	}
	secrets := opts.BootstrapKubeconfigs
	if len(opts.BootstrapKubeconfig) > 0 {
		secrets = []NamedKubeconfig{{Name: BootstrapHubKubeconfigSecret, Kubeconfig: opts.BootstrapKubeconfig}}
	}
	for _, s := range secrets {
		if err := o.applySecret(ctx, opts.Namespace, s.Name, map[string][]byte{KubeconfigSecretKey: s.Kubeconfig}); err != nil {
			return nil, err
		}
	}

	k := &operatorv1.Klusterlet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operator.open-cluster-management.io/v1", Kind: "Klusterlet"},
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name},
		Spec: operatorv1.KlusterletSpec{
			ClusterName:               opts.ClusterName,
			Namespace:                 opts.Namespace,
			RegistrationImagePullSpec: opts.RegistrationImage,
			WorkImagePullSpec:         opts.WorkImage,
			DeployOption:              operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeDefault},
		},
	}
	if len(opts.BootstrapKubeconfigs) > 0 {
		local := &operatorv1.LocalSecretsConfig{HubConnectionTimeoutSeconds: opts.HubConnectionTimeoutSeconds}
		for _, s := range opts.BootstrapKubeconfigs {
			local.KubeConfigSecrets = append(local.KubeConfigSecrets, operatorv1.KubeConfigSecret{Name: s.Name})
		}
		k.Spec.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{
			FeatureGates: []operatorv1.FeatureGate{{Feature: "MultipleHubs", Mode: operatorv1.FeatureGateModeTypeEnable}},
			BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{
				Type:         operatorv1.LocalSecrets,
				LocalSecrets: local,
			},
		}
	}
	if opts.Customize != nil {
		opts.Customize(k)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(k)
	if err != nil {
		return nil, fmt.Errorf("klusterlet %s: %w", k.Name, err)
	}
	client := o.dynamic.Resource(klusterletGVR)
	stored, err := client.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var existing *unstructured.Unstructured
		if existing, err = client.Get(ctx, k.Name, metav1.GetOptions{}); err == nil {
			existing.Object["spec"] = obj["spec"]
			stored, err = client.Update(ctx, existing, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("applying Klusterlet %s: %w", k.Name, err)
	}
	return toKlusterlet(stored)
}

// GetKlusterlet returns Klusterlet name as stored (status included).
func (o *KlusterletOperator) GetKlusterlet(ctx context.Context, name string) (*operatorv1.Klusterlet, error) {
	u, err := o.dynamic.Resource(klusterletGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("getting Klusterlet %s: %w", name, err)
	}
	return toKlusterlet(u)
}

func toKlusterlet(u *unstructured.Unstructured) (*operatorv1.Klusterlet, error) {
	k := &operatorv1.Klusterlet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, k); err != nil {
		return nil, fmt.Errorf("decoding Klusterlet %s: %w", u.GetName(), err)
	}
	return k, nil
}

// applySecret creates Secret namespace/name with data or replaces the data of the existing one.
func (o *KlusterletOperator) applySecret(ctx context.Context, namespace, name string, data map[string][]byte) error {
	secrets := o.spoke.Kube.CoreV1().Secrets(namespace)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Data: data}
	_, err := secrets.Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var existing *corev1.Secret
		if existing, err = secrets.Get(ctx, name, metav1.GetOptions{}); err == nil {
			existing.Data = data
			_, err = secrets.Update(ctx, existing, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("applying Secret %s/%s: %w", namespace, name, err)
	}
	return nil
}

// AgentDeployments are the Deployments the operator renders for a Default-mode Klusterlet.
type AgentDeployments struct {
	Registration *appsv1.Deployment
	Work         *appsv1.Deployment
}

// WaitForAgentDeployments polls (every 200 ms, until ctx ends) for Deployments <k>-registration-agent and
// <k>-work-agent in the Klusterlet's agent namespace such that ready(registration, work) is true (nil ready: both
// exist). The operator renders the work agent with 0 replicas until the registration agent reports a hub
// connection, which never happens without a kubelet. The error carries the Klusterlet's conditions and the tail
// of the operator's log.
func (o *KlusterletOperator) WaitForAgentDeployments(ctx context.Context, k *operatorv1.Klusterlet,
	ready func(registration, work *appsv1.Deployment) bool) (*AgentDeployments, error) {
	namespace := k.Spec.Namespace
	if namespace == "" {
		namespace = DefaultAgentNamespace
	}
	deployments := o.spoke.Kube.AppsV1().Deployments(namespace)
	var got AgentDeployments
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if o.proc != nil { // a pod is the kubelet's to restart
			if done, exitErr := o.proc.exited(); done {
				return false, fmt.Errorf("klusterlet-operator exited: %v", exitErr)
			}
		}
		reg, err := deployments.Get(ctx, RegistrationDeploymentName(k.Name), metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		work, err := deployments.Get(ctx, WorkDeploymentName(k.Name), metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		got = AgentDeployments{Registration: reg, Work: work}
		if ready != nil && !ready(reg, work) {
			lastErr = fmt.Errorf("deployments exist but do not match yet")
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		conditions := "(unreadable)"
		if cur, getErr := o.GetKlusterlet(context.Background(), k.Name); getErr == nil {
			var parts []string
			for _, c := range cur.Status.Conditions {
				parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
			}
			conditions = strings.Join(parts, "; ")
		}
		return nil, fmt.Errorf("deployments %s and %s in %s (%v; last: %v); Klusterlet conditions: %s; %s",
			RegistrationDeploymentName(k.Name), WorkDeploymentName(k.Name), namespace, err, lastErr, conditions,
			o.operatorLogTail())
	}
	return &got, nil
}

// LocalContainer is a container of a rendered Deployment made runnable on this machine: its volumes materialized
// under Root and its arguments pointed at them.
type LocalContainer struct {
	// Args is the container's command followed by its args (the klusterlet's containers have no command:
	// Args[0] is the executable's path in the image, e.g. "/registration"), with every argument, or value of
	// a --flag=value argument, that is an absolute path at or under a volume mount prefixed with Root (so
	// "--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig" becomes "--bootstrap-kubeconfig=<Root>/spoke/bootstrap/kubeconfig").
	Args []string
	// Env is the container's environment as KEY=VALUE: literal values, fieldRef metadata.name (PodName),
	// metadata.namespace and spec.serviceAccountName, and secretKeyRef/configMapKeyRef values read now.
	Env []string
	// Root is the directory the container's file system paths are mapped under.
	Root string
	// Mounts maps each volume mount's path in the container to its local directory (Root + mount path).
	Mounts map[string]string
	// PodName is the made-up pod name: <deployment>-local.
	PodName string
	// Namespace is the Deployment's namespace.
	Namespace string
	// ServiceAccountName is the pod template's spec.serviceAccountName (e.g. klusterlet-registration-sa); see
	// Spoke.ServiceAccountKubeconfig.
	ServiceAccountName string
}

// LocalPath returns the local path of containerPath (absolute, in the container) and whether it lies under a
// volume mount; paths outside every mount are returned unchanged with false.
func (c *LocalContainer) LocalPath(containerPath string) (string, bool) {
	if mount := c.mountOf(containerPath); mount != "" {
		return filepath.Join(c.Root, filepath.FromSlash(containerPath)), true
	}
	return containerPath, false
}

// mountOf returns the longest mount path that is containerPath or a parent of it, or "".
func (c *LocalContainer) mountOf(containerPath string) string {
	if !path.IsAbs(containerPath) {
		return ""
	}
	clean := path.Clean(containerPath)
	best := ""
	for m := range c.Mounts {
		if (clean == m || strings.HasPrefix(clean, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	return best
}

// LocalContainer makes container containerName ("" for the first) of deploy's pod template runnable under root
// (created if missing): for each volume mount, a Secret or ConfigMap volume becomes a directory
// <root><mountPath> holding the object's current data as files (mode 0600; the volume's items, when listed,
// choose keys and paths; an optional volume whose object is missing stays empty), an emptyDir an empty directory.
// Errors name what cannot be reproduced outside a pod (other volume kinds, subPath mounts, resourceFieldRef env)
// and objects that are missing.
func (s *Spoke) LocalContainer(ctx context.Context, deploy *appsv1.Deployment, containerName, root string) (*LocalContainer, error) {
	podSpec := deploy.Spec.Template.Spec
	var container *corev1.Container
	for i := range podSpec.Containers {
		if containerName == "" || podSpec.Containers[i].Name == containerName {
			container = &podSpec.Containers[i]
			break
		}
	}
	where := fmt.Sprintf("deployment %s/%s", deploy.Namespace, deploy.Name)
	if container == nil {
		return nil, fmt.Errorf("%s has no container %q", where, containerName)
	}
	where += " container " + container.Name
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	lc := &LocalContainer{
		Root: root, Mounts: map[string]string{}, PodName: deploy.Name + "-local", Namespace: deploy.Namespace,
		ServiceAccountName: podSpec.ServiceAccountName,
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range podSpec.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range container.VolumeMounts {
		if m.SubPath != "" || m.SubPathExpr != "" {
			return nil, fmt.Errorf("%s: volume mount %s uses subPath, which LocalContainer does not reproduce", where, m.Name)
		}
		v, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("%s: volume mount %s names no volume of the pod", where, m.Name)
		}
		mountPath := path.Clean(m.MountPath)
		dir := filepath.Join(root, filepath.FromSlash(mountPath))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		lc.Mounts[mountPath] = dir
		if err := s.materializeVolume(ctx, deploy.Namespace, v, dir); err != nil {
			return nil, fmt.Errorf("%s: volume %s at %s: %w", where, v.Name, mountPath, err)
		}
	}
	for _, arg := range append(append([]string(nil), container.Command...), container.Args...) {
		lc.Args = append(lc.Args, lc.remapArg(arg))
	}
	for _, e := range container.Env {
		value, err := s.envValue(ctx, lc, podSpec, e)
		if err != nil {
			return nil, fmt.Errorf("%s: env %s: %w", where, e.Name, err)
		}
		lc.Env = append(lc.Env, e.Name+"="+value)
	}
	return lc, nil
}

// remapArg prefixes Root to arg, or to the value of a --flag=value arg, when it is a path under a mount.
func (c *LocalContainer) remapArg(arg string) string {
	prefix, value := "", arg
	if strings.HasPrefix(arg, "-") {
		i := strings.Index(arg, "=")
		if i < 0 {
			return arg
		}
		prefix, value = arg[:i+1], arg[i+1:]
	}
	if local, ok := c.LocalPath(value); ok {
		return prefix + local
	}
	return arg
}

// materializeVolume fills dir with the content volume v would have in a pod in namespace.
func (s *Spoke) materializeVolume(ctx context.Context, namespace string, v corev1.Volume, dir string) error {
	var (
		data     map[string][]byte
		items    []corev1.KeyToPath
		optional bool
	)
	switch {
	case v.EmptyDir != nil:
		return nil
	case v.Secret != nil:
		optional = v.Secret.Optional != nil && *v.Secret.Optional
		items = v.Secret.Items
		secret, err := s.Kube.CoreV1().Secrets(namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading Secret %s/%s: %w", namespace, v.Secret.SecretName, err)
		}
		data = secret.Data
	case v.ConfigMap != nil:
		optional = v.ConfigMap.Optional != nil && *v.ConfigMap.Optional
		items = v.ConfigMap.Items
		cm, err := s.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, v.ConfigMap.Name, err)
		}
		data = map[string][]byte{}
		for k, val := range cm.Data {
			data[k] = []byte(val)
		}
		for k, val := range cm.BinaryData {
			data[k] = val
		}
	default:
		return fmt.Errorf("only secret, configMap and emptyDir volumes are reproduced outside a pod")
	}
	files := map[string][]byte{}
	if len(items) == 0 {
		for k, val := range data {
			files[k] = val
		}
	} else {
		for _, it := range items {
			val, ok := data[it.Key]
			if !ok {
				if optional {
					continue
				}
				return fmt.Errorf("key %s missing", it.Key)
			}
			files[it.Path] = val
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if path.IsAbs(name) || strings.HasPrefix(path.Clean(name), "..") {
			return fmt.Errorf("item path %q leaves the volume", name)
		}
		file := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		if err := writeFileAtomic(file, files[name]); err != nil {
			return err
		}
	}
	return nil
}

// envValue resolves one environment variable of the local container.
func (s *Spoke) envValue(ctx context.Context, lc *LocalContainer, podSpec corev1.PodSpec, e corev1.EnvVar) (string, error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return e.Value, nil
	case from.FieldRef != nil:
		switch from.FieldRef.FieldPath {
		case "metadata.name":
			return lc.PodName, nil
		case "metadata.namespace":
			return lc.Namespace, nil
		case "spec.serviceAccountName":
			return podSpec.ServiceAccountName, nil
		}
		return "", fmt.Errorf("fieldRef %s is not reproduced outside a pod", from.FieldRef.FieldPath)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		secret, err := s.Kube.CoreV1().Secrets(lc.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("reading Secret %s/%s: %w", lc.Namespace, ref.Name, err)
		}
		val, ok := secret.Data[ref.Key]
		if !ok {
			return "", fmt.Errorf("Secret %s/%s has no key %s", lc.Namespace, ref.Name, ref.Key)
		}
		return string(val), nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := s.Kube.CoreV1().ConfigMaps(lc.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("reading ConfigMap %s/%s: %w", lc.Namespace, ref.Name, err)
		}
		val, ok := cm.Data[ref.Key]
		if !ok {
			return "", fmt.Errorf("ConfigMap %s/%s has no key %s", lc.Namespace, ref.Name, ref.Key)
		}
		return val, nil
	}
	return "", fmt.Errorf("valueFrom kind is not reproduced outside a pod")
}
