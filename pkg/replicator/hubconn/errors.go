package hubconn

import (
	"context"
	"errors"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// isConnectionError reports whether err says the hub did not answer: a refused or reset connection, an
// unexpected EOF, a timeout or another network error — as opposed to an answer (any API status, including 5xx
// from a live server, which the next probe judges).
func isConnectionError(err error) bool {
	var status apierrors.APIStatus
	switch {
	case err == nil, errors.As(err, &status):
		return false
	case errors.Is(err, context.DeadlineExceeded), utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// ErrCacheBehind is returned by Hub.Get when the hub holds a different version of a copy than its cache (or no
// longer holds it): the informer's event for that change follows, and the caller retries then. A missing
// object is never reported as absent from such a read: only the informer's delete says it is gone.
var ErrCacheBehind = errors.New("the hub's cache is behind the hub")
