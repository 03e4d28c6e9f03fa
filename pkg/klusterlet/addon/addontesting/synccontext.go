// Package addontesting has test doubles for the add-on controllers' unit tests. Never use it outside tests.
package addontesting

import (
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/client-go/util/workqueue"
)

// RecordingQueue records Add and AddAfter; a sync uses nothing else of its queue.
type RecordingQueue struct {
	workqueue.RateLimitingInterface
	// Added lists the keys given to Add, in order.
	Added []string
	// After maps each key given to AddAfter to its last delay.
	After map[string]time.Duration
}

// Add records key.
func (q *RecordingQueue) Add(item any) { q.Added = append(q.Added, item.(string)) }

// AddAfter records key and d.
func (q *RecordingQueue) AddAfter(item any, d time.Duration) { q.After[item.(string)] = d }

// SyncContext is a factory.SyncContext for one queue key with a RecordingQueue.
type SyncContext struct {
	Key   string
	Q     *RecordingQueue
	Event events.Recorder
}

// NewSyncContext returns a SyncContext for key with an empty RecordingQueue.
func NewSyncContext(key string, recorder events.Recorder) *SyncContext {
	return &SyncContext{Key: key, Q: &RecordingQueue{After: map[string]time.Duration{}}, Event: recorder}
}

// Queue returns the RecordingQueue.
func (f *SyncContext) Queue() workqueue.RateLimitingInterface { return f.Q }

// QueueKey returns Key.
func (f *SyncContext) QueueKey() string { return f.Key }

// Recorder returns Event.
func (f *SyncContext) Recorder() events.Recorder { return f.Event }
