/*
Copyright 2025 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// WebhookPanics is a prometheus counter metrics which holds the total
	// number of panics from conversion webhooks.
	WebhookPanics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_conversion_webhook_panics_total",
		Help: "Total number of conversion webhook panics",
	}, []string{})
)

func init() {
	metrics.Registry.MustRegister(
		WebhookPanics,
	)
	// Init metric.
	WebhookPanics.WithLabelValues().Add(0)
}
