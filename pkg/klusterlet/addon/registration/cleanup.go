package registration

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/openshift/library-go/pkg/controller/factory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// removeAll deletes every Secret kept for an add-on in this run.
func (c *AddOnRegistrationController) removeAll(ctx context.Context, syncCtx factory.SyncContext, name, why string) error {
	var errs []error
	for _, cfg := range c.known[name] {
		if err := c.remove(ctx, syncCtx, cfg, why); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		delete(c.known, name)
	}
	return utilerrors.NewAggregate(errs)
}

// remove deletes one registration's Secret and forgets its CSR. A Secret another hub issued (its issuing-hub
// annotation names another hub) is kept untouched: it is that hub's credentials, good again after a switch back.
// The delete is conditional on the version read, so a Secret rewritten meanwhile is not lost.
func (c *AddOnRegistrationController) remove(ctx context.Context, syncCtx factory.SyncContext, cfg Config, why string) error {
	delete(c.states, cfg.Key())
	delete(c.pending, cfg.Key())
	delete(c.failures, cfg.Key())
	live, err := c.secretsFor(cfg).Get(ctx, cfg.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("add-on %s: get Secret %s: %w", cfg.AddOnName, cfg.Key(), err)
	}
	if issuer, ok := live.Annotations[IssuingHubAnnotation]; ok && issuer != c.o.HubName {
		klog.FromContext(ctx).Info("Keeping the Secret of a gone registration: another hub issued it", "secret", cfg.Key(), "issuingHub", issuer)
		return nil
	}
	err = c.secretsFor(cfg).Delete(ctx, cfg.SecretName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &live.UID, ResourceVersion: &live.ResourceVersion}})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("add-on %s: Secret %s changed while it was being deleted; looking again: %w", cfg.AddOnName, cfg.Key(), err)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("add-on %s: delete Secret %s: %w", cfg.AddOnName, cfg.Key(), err)
	}
	if err == nil {
		syncCtx.Recorder().Eventf(ReasonAddOnCredentialsRemoved, "Secret %s of add-on %s deleted: %s", cfg.Key(), cfg.AddOnName, why)
	}
	return nil
}

// scanSecrets looks at every labelled Secret with the issuing-hub annotation once per run: those issued by this
// hub whose add-on or registration is gone are deleted; those of another hub whose add-on this hub does not have
// are kept and reported.
func (c *AddOnRegistrationController) scanSecrets(ctx context.Context, syncCtx factory.SyncContext) error {
	type target struct {
		hosted   bool
		informer corev1informers.SecretInformer
	}
	targets := []target{{false, c.o.SpokeSecretInformer}}
	if c.separateHosting {
		targets = append(targets, target{true, c.o.HostingSecretInformer})
	}
	var errs []error
	notOnHub := map[string][]string{}
	for _, t := range targets {
		secrets, err := t.informer.Lister().List(labels.Everything())
		if err != nil {
			return fmt.Errorf("list add-on Secrets: %w", err)
		}
		for _, s := range secrets {
			issuer, ok := s.Annotations[IssuingHubAnnotation]
			name := s.Labels[AddOnNameLabel]
			if !ok || name == "" {
				continue
			}
			cfg := Config{AddOnName: name, Namespace: s.Namespace, SecretName: s.Name, Hosted: t.hosted}
			exists, has := c.registered(name, cfg.Key(), t.hosted)
			switch {
			case has:
			case issuer == c.o.HubName && !exists:
				// Only when the add-on itself is gone: a registration missing for a moment (status being rewritten)
				// must not cost the add-on its credentials; the add-on's own sync removes a registration that went.
				if err := c.remove(ctx, syncCtx, cfg, fmt.Sprintf("issued by hub %s, which no longer has this registration", c.o.HubName)); err != nil {
					errs = append(errs, err)
				}
			case !exists:
				notOnHub[issuer] = append(notOnHub[issuer], fmt.Sprintf("%s (Secret %s)", name, cfg.Key()))
				c.states[cfg.Key()] = failoverv1alpha1.AddOnRegistrationStatus{Name: name, Secret: cfg.Key(), State: failoverv1alpha1.AddOnRegistrationNotOnHub,
					IssuingHub: issuer, Message: fmt.Sprintf("issued by hub %s; hub %s has no ManagedClusterAddOn %s: the Secret is kept untouched", issuer, c.o.HubName, name)}
			}
		}
	}
	for _, issuer := range slices.Sorted(maps.Keys(notOnHub)) {
		list := notOnHub[issuer]
		slices.Sort(list)
		syncCtx.Recorder().Warningf(ReasonAddOnNotOnHub, "hub %s has no registration for add-on %v issued by hub %s; the Secrets are kept untouched",
			c.o.HubName, list, issuer)
	}
	return utilerrors.NewAggregate(errs)
}

// registered reports whether the hub has the add-on, and whether it has a registration whose Secret is key. A
// Secret on a cluster that serves both managed and hosted add-ons (the agent runs on the managed cluster) matches
// either kind. A deleting add-on counts as having every registration (left alone, as OCM).
func (c *AddOnRegistrationController) registered(name, key string, hosted bool) (exists, has bool) {
	addOn, err := c.addOns.ManagedClusterAddOns(c.o.ClusterName).Get(name)
	if err != nil {
		return false, false
	}
	if !addOn.DeletionTimestamp.IsZero() {
		return true, true
	}
	configs, _ := ConfigsFor(c.o.ClusterName, c.o.AgentName, addOn)
	for _, cfg := range configs {
		if cfg.Key() == key || (!c.separateHosting && !hosted && cfg.Hosted && "hosted:"+key == cfg.Key()) {
			return true, true
		}
	}
	return true, false
}
