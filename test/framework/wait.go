package framework

import (
	"fmt"
	"testing"
	"time"
)

// Poll calls condition every interval until it returns true, returns an error, or timeout passes; it returns
// whether the condition was met and the last error or, on timeout, nil. condition is called at once first.
// Errors do not stop the polling: they are kept as the last error, which Eventually reports.
func Poll(timeout, interval time.Duration, condition func() (bool, error)) (bool, error) {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := condition()
		if ok {
			return true, nil
		}
		lastErr = err
		if time.Now().After(deadline) {
			return false, lastErr
		}
		time.Sleep(interval)
	}
}

// Eventually fails the test (t.Fatalf) unless condition returns true within timeout, polling every interval.
// Errors returned by condition are retried; the failure message is msgAndArgs (a format and its arguments,
// optional) followed by the last error.
func Eventually(t testing.TB, timeout, interval time.Duration, condition func() (bool, error), msgAndArgs ...any) {
	t.Helper()
	if ok, err := Poll(timeout, interval, condition); !ok {
		t.Fatalf("%s: not true within %s (last error: %v)", message(msgAndArgs), timeout, err)
	}
}

// Consistently fails the test (t.Fatalf) if condition returns false or an error at any poll during duration.
func Consistently(t testing.TB, duration, interval time.Duration, condition func() (bool, error), msgAndArgs ...any) {
	t.Helper()
	start := time.Now()
	for {
		ok, err := condition()
		if err != nil || !ok {
			t.Fatalf("%s: became false after %s (error: %v)", message(msgAndArgs), time.Since(start).Round(time.Millisecond), err)
		}
		if time.Since(start) > duration {
			return
		}
		time.Sleep(interval)
	}
}

// message formats msgAndArgs: a format string and its arguments, or nothing.
func message(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return "condition"
	}
	format, ok := msgAndArgs[0].(string)
	if !ok {
		return "condition"
	}
	return fmt.Sprintf(format, msgAndArgs[1:]...)
}
