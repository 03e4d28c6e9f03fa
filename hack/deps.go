//go:build tools

// Package hack pins libraries the product and its tests build on, so that
// go.mod and vendor/ hold them before the first import lands.
package hack

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/openshift/library-go/pkg/controller/controllercmd"
	_ "github.com/openshift/library-go/pkg/controller/factory"
	_ "github.com/openshift/library-go/pkg/operator/events"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/pflag"
	_ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	_ "k8s.io/apimachinery/pkg/util/uuid"
	_ "k8s.io/apimachinery/pkg/util/validation"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/testing"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/tools/events"
	_ "k8s.io/client-go/util/cert"
	_ "k8s.io/client-go/util/certificate/csr"
	_ "k8s.io/client-go/util/keyutil"
	_ "k8s.io/component-base/metrics"
	_ "k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/testutil"
	_ "k8s.io/utils/clock"
	_ "k8s.io/utils/clock/testing"
	_ "open-cluster-management.io/api/addon/v1alpha1"
	_ "open-cluster-management.io/api/addon/v1beta1"
	_ "open-cluster-management.io/api/client/cluster/clientset/versioned"
	_ "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	_ "open-cluster-management.io/api/client/cluster/informers/externalversions"
	_ "open-cluster-management.io/api/cluster/v1"
	_ "open-cluster-management.io/api/cluster/v1alpha1"
	_ "open-cluster-management.io/api/operator/v1"
	_ "open-cluster-management.io/api/work/v1"
	_ "open-cluster-management.io/api/work/v1alpha1"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
)
