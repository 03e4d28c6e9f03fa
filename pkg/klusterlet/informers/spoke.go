package informers

import (
	"context"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
)

// StripManagedFields is an informer transform (client-go cache.TransformFunc) that drops metadata.managedFields
// from every cached object: no code of the agent reads them from an informer (the clock-skew check reads them
// from a Lease it GETs from the hub), and on small objects they are often the largest part. Objects that are not
// Kubernetes objects (cache.DeletedFinalStateUnknown tombstones, which client-go does not pass to transforms)
// are returned unchanged. Updates written from a cached copy stay correct: a request without managedFields
// keeps the object's stored ones. It never returns an error.
func StripManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

// CompactNode is the transform of the spoke Node informer: a Node is replaced by a Node that holds only what
// the status controller reads from it (managedcluster's resource reconciler sums status.capacity and
// status.allocatable and skips the allocatable of spec.unschedulable Nodes) plus the identity the cache needs
// (name, UID, resourceVersion). Labels, annotations, conditions, images, addresses, node info and managedFields are
// dropped: on a real Node they are most of its size (the image list alone is often several KiB). Any other
// object goes through StripManagedFields. It is idempotent (client-go may transform an object it already
// transformed) and never returns an error.
func CompactNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return StripManagedFields(obj)
	}
	compact := compactNode(node)
	if reflect.DeepEqual(compact, node) {
		return node, nil // already compact (listCompactNodes' items): no second copy
	}
	return compact, nil
}

// compactNode returns a new Node with only what CompactNode keeps of node.
func compactNode(node *corev1.Node) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:            node.Name,
			UID:             node.UID,
			ResourceVersion: node.ResourceVersion,
		},
		Spec: corev1.NodeSpec{Unschedulable: node.Spec.Unschedulable},
		Status: corev1.NodeStatus{
			Capacity:    node.Status.Capacity,
			Allocatable: node.Status.Allocatable,
		},
	}
}

// NewSpokeFactory returns an informer factory on the managed cluster for its cluster-scoped objects
// (Nodes) whose informers cache compacted objects: Nodes through CompactNode, anything else without
// managedFields. Its Node informer also lists page by page and compacts every page before it reads the next
// (listCompactNodes), so that the full Nodes of a large cluster are never all in memory at once. defaultResync
// is the informer resync period (0 disables it). Use it only for informers whose objects are read, never
// written back.
func NewSpokeFactory(client kubernetes.Interface, defaultResync time.Duration) kubeinformers.SharedInformerFactory {
	f := kubeinformers.NewSharedInformerFactoryWithOptions(client, defaultResync, kubeinformers.WithTransform(CompactNode))
	// Registered first, so that f.Core().V1().Nodes() returns this informer.
	f.InformerFor(&corev1.Node{}, newPagedNodeInformer)
	return f
}

// nodeListPageSize is how many Nodes one list request of the Node informer asks for.
const nodeListPageSize = 500

// newPagedNodeInformer is the Node informer of NewSpokeFactory: client-go's, with listCompactNodes as
// its list.
func newPagedNodeInformer(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	list := func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
		return listCompactNodes(ctx, client, options)
	}
	return cache.NewSharedIndexInformer(
		cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListFunc: func(options metav1.ListOptions) (runtime.Object, error) {
				return list(context.Background(), options)
			},
			WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
				return client.CoreV1().Nodes().Watch(context.Background(), options)
			},
			ListWithContextFunc: list,
			WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
				return client.CoreV1().Nodes().Watch(ctx, options)
			},
		}, client),
		&corev1.Node{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// listCompactNodes lists every Node in pages of nodeListPageSize and returns them compacted (compactNode) in
// one list carrying the resourceVersion of the first page (the list's snapshot, which the informer's watch
// starts from). A reflector's first list asks for resourceVersion "0" (any cached state), which the apiserver
// answers whole, ignoring the limit; it is asked for as "" (the current state) instead, which the apiserver
// pages. Other options pass through. The list is a metav1.List whose items hold the compacted *corev1.Node
// objects: the reflector takes such items as they are, where it would copy each element of a NodeList's
// []Node once more. The error of a failed page is returned; the informer retries the list.
func listCompactNodes(ctx context.Context, client kubernetes.Interface, options metav1.ListOptions) (*metav1.List, error) {
	if options.ResourceVersion == "0" {
		options.ResourceVersion = ""
		options.ResourceVersionMatch = ""
	}
	options.Limit = nodeListPageSize
	options.Continue = ""
	out := &metav1.List{}
	for first := true; ; first = false {
		page, err := client.CoreV1().Nodes().List(ctx, options)
		if err != nil {
			return nil, err
		}
		if first {
			out.ResourceVersion = page.ResourceVersion
			size := len(page.Items)
			if page.RemainingItemCount != nil && *page.RemainingItemCount > 0 {
				size += int(*page.RemainingItemCount)
			}
			out.Items = make([]runtime.RawExtension, 0, size)
		}
		for i := range page.Items {
			out.Items = append(out.Items, runtime.RawExtension{Object: compactNode(&page.Items[i])})
		}
		if page.Continue == "" {
			return out, nil
		}
		// A continued list takes its snapshot from the token.
		options.Continue, options.ResourceVersion, options.ResourceVersionMatch = page.Continue, "", ""
	}
}

// NewNamespacedFactory returns an informer factory on the agent namespace (Secrets and the like) whose
// informers cache objects without managedFields (StripManagedFields); everything else of them is kept, Secret
// data included. defaultResync is the informer resync period (0 disables it).
func NewNamespacedFactory(client kubernetes.Interface, namespace string, defaultResync time.Duration) kubeinformers.SharedInformerFactory {
	return kubeinformers.NewSharedInformerFactoryWithOptions(client, defaultResync, kubeinformers.WithNamespace(namespace),
		kubeinformers.WithTransform(StripManagedFields))
}

// NewClaimFactory returns an informer factory on the managed cluster's ClusterClaims whose informers
// cache them without managedFields (StripManagedFields). defaultResync is the informer resync period (0
// disables it).
func NewClaimFactory(client clusterclientset.Interface, defaultResync time.Duration) clusterinformers.SharedInformerFactory {
	return clusterinformers.NewSharedInformerFactoryWithOptions(client, defaultResync, clusterinformers.WithTransform(StripManagedFields))
}

var _ cache.TransformFunc = CompactNode
