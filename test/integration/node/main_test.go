package node_test

import (
	"os"
	"testing"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// TestMain removes the image tarballs the suite built once its tests have run.
func TestMain(m *testing.M) {
	code := m.Run()
	framework.RemoveNodeImages()
	os.Exit(code)
}
