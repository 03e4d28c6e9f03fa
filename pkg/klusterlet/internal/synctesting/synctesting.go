// Package synctesting is the agent's one fake library-go factory.SyncContext, for unit tests that need a chosen
// queue key or to see what a sync queued. Tests that need neither use library-go's own
// factory.NewSyncContext(name, recorder). Never use it outside tests.
package synctesting

import (
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
)

// SyncContext is a factory.SyncContext with a chosen queue key, an in-memory recorder and a queue that records
// what a sync adds to it. Create it with New.
type SyncContext struct {
	key      string
	queue    *queue
	recorder events.InMemoryRecorder
}

var _ factory.SyncContext = &SyncContext{}

// New returns a SyncContext for key whose events go to recorder, with an empty queue.
func New(key string, recorder events.InMemoryRecorder) *SyncContext {
	return &SyncContext{key: key, queue: &queue{}, recorder: recorder}
}

// WithKey returns a SyncContext for key that shares c's queue and recorder.
func (c *SyncContext) WithKey(key string) *SyncContext {
	copied := *c
	copied.key = key
	return &copied
}

// Queue returns the recording queue. Add and AddAfter are recorded and queue nothing; a sync uses no other
// method of its queue (any other call panics).
func (c *SyncContext) Queue() workqueue.RateLimitingInterface { return c.queue }

// QueueKey returns the key given to New or WithKey.
func (c *SyncContext) QueueKey() string { return c.key }

// Recorder returns the recorder given to New.
func (c *SyncContext) Recorder() events.Recorder { return c.recorder }

// Events returns the events recorded so far, oldest first.
func (c *SyncContext) Events() []*corev1.Event { return c.recorder.Events() }

// Added returns the keys given to Queue().Add, in order.
func (c *SyncContext) Added() []string {
	c.queue.lock.Lock()
	defer c.queue.lock.Unlock()
	return append([]string(nil), c.queue.added...)
}

// Requeue is one call of Queue().AddAfter: the key and its delay.
type Requeue struct {
	Key   string
	After time.Duration
}

// Requeues returns the calls of Queue().AddAfter, in order.
func (c *SyncContext) Requeues() []Requeue {
	c.queue.lock.Lock()
	defer c.queue.lock.Unlock()
	return append([]Requeue(nil), c.queue.after...)
}

// Delays returns the delays given to Queue().AddAfter, in order.
func (c *SyncContext) Delays() []time.Duration {
	var delays []time.Duration
	for _, r := range c.Requeues() {
		delays = append(delays, r.After)
	}
	return delays
}

// After returns the last delay given to Queue().AddAfter for key; 0 when there was none.
func (c *SyncContext) After(key string) time.Duration {
	var d time.Duration
	for _, r := range c.Requeues() {
		if r.Key == key {
			d = r.After
		}
	}
	return d
}

// queue records Add and AddAfter of string keys; the embedded interface is nil, so that any other call fails
// loudly.
type queue struct {
	workqueue.RateLimitingInterface

	lock  sync.Mutex
	added []string
	after []Requeue
}

func (q *queue) Add(item any) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.added = append(q.added, item.(string))
}

func (q *queue) AddAfter(item any, d time.Duration) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.after = append(q.after, Requeue{Key: item.(string), After: d})
}
