// Package version holds the build's version, filled in at link time through -ldflags -X.
package version

import (
	"fmt"
	"runtime"

	"k8s.io/apimachinery/pkg/version"
)

// Set at link time, e.g. -X github.com/klusterlet-failover/klusterlet-failover/pkg/version.gitVersion=v0.1.0.
var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = "unknown"
	buildDate  = "1970-01-01T00:00:00Z"
)

// Get returns the build's version information in the shape Kubernetes components report it.
func Get() version.Info {
	return version.Info{
		GitVersion: gitVersion,
		GitCommit:  gitCommit,
		BuildDate:  buildDate,
		GoVersion:  runtime.Version(),
		Compiler:   runtime.Compiler,
		Platform:   fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
}
