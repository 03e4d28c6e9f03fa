package klusterlet_test

import (
	"context"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/spf13/pflag"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
)

// The founding design's API of package klusterlet (NewFailoverAgentOptions, AddFlags, Complete, Validate,
// RunFailoverAgent), pinned at compile time: a change of any of these signatures breaks this file's build.
var (
	_ func() *klusterlet.FailoverAgentOptions                                    = klusterlet.NewFailoverAgentOptions
	_ func(*pflag.FlagSet)                                                       = (&klusterlet.FailoverAgentOptions{}).AddFlags
	_ func(corev1client.CoreV1Interface, context.Context, events.Recorder) error = (&klusterlet.FailoverAgentOptions{}).Complete
	_ func() error                                                               = (&klusterlet.FailoverAgentOptions{}).Validate
	_ func(context.Context, *controllercmd.ControllerContext) error              = (&klusterlet.FailoverAgentOptions{}).RunFailoverAgent
	// RunFailoverAgent is a controllercmd run function.
	_ controllercmd.StartFunc = (&klusterlet.FailoverAgentOptions{}).RunFailoverAgent
)

// seedFields returns the founding design's nine fields of FailoverAgentOptions; its result types pin their names
// and types at compile time.
func seedFields(o *klusterlet.FailoverAgentOptions) (componentNamespace, clusterName, agentName, bootstrapKubeconfig,
	hubKubeconfigSecret, hubKubeconfigDir string, spokeExternalServerURLs []string, clusterHealthCheckPeriod time.Duration,
	maxCustomClusterClaims int) {
	return o.ComponentNamespace, o.ClusterName, o.AgentName, o.BootstrapKubeconfig, o.HubKubeconfigSecret, o.HubKubeconfigDir,
		o.SpokeExternalServerURLs, o.ClusterHealthCheckPeriod, o.MaxCustomClusterClaims
}

// TestSeedFlags: AddFlags registers the founding design's flags, and each one sets its seed
// field.
func TestSeedFlags(t *testing.T) {
	o := klusterlet.NewFailoverAgentOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	// The flags' defaults are pinned by TestFlagDefaults (options_test.go) and, on the command line, by
	// pkg/cmd's TestFailoverCommandHelpListsSeedFlags: here, each seed flag lands in its seed field.
	if err := fs.Parse([]string{"--cluster-name=c1", "--agent-name=a1", "--bootstrap-kubeconfig=/b/kubeconfig",
		"--hub-kubeconfig-secret=s1", "--hub-kubeconfig-dir=/d", "--spoke-external-server-urls=https://a:6443",
		"--spoke-external-server-urls=https://b:6443", "--cluster-healthcheck-period=2m", "--max-custom-cluster-claims=3"}); err != nil {
		t.Fatal(err)
	}
	_, cluster, agent, bootstrap, secret, dir, urls, period, claims := seedFields(o)
	if cluster != "c1" || agent != "a1" || bootstrap != "/b/kubeconfig" || secret != "s1" || dir != "/d" ||
		len(urls) != 2 || urls[1] != "https://b:6443" || period != 2*time.Minute || claims != 3 {
		t.Errorf("fields after parsing: %q %q %q %q %q %v %s %d", cluster, agent, bootstrap, secret, dir, urls, period, claims)
	}
}
