package replicator_test

import (
	"flag"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain sets klog's verbosity from KF_TEST_KLOG_V (e.g. 4 for the replicator's decisions).
func TestMain(m *testing.M) {
	if v := os.Getenv("KF_TEST_KLOG_V"); v != "" {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", v)
	}
	os.Exit(m.Run())
}
