package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateFailoverConfig checks fc.Spec against the rules the CRD schema enforces on the API server, so that
// objects that did not pass through it (fake clients, an older CRD) are held to the same rules:
//   - spec.alternateHubs has at most MaxAlternateHubs entries;
//   - each name is a DNS-1123 label, unique, and not HubNamePrimary;
//   - each bootstrapKubeconfigSecretRef is a DNS-1123 subdomain (a valid Secret name);
//   - every set duration is at least its Min* constant (omitted ones take their defaults);
//   - spec.switchTo and spec.forceSwitch are each empty, HubNamePrimary, the name of an alternate hub or one of
//     fileHubs (the names of the hubs the agent has from bootstrap kubeconfig files, which the FailoverConfig
//     does not list);
//   - spec.failback.policy is empty, None or Primary.
//
// It returns every violation found, each naming the field path (e.g. "spec.alternateHubs[1].name"); an empty
// list means valid. A nil fc yields one Required error.
func ValidateFailoverConfig(fc *FailoverConfig, fileHubs ...string) field.ErrorList {
	if fc == nil {
		return field.ErrorList{field.Required(field.NewPath("spec"), "a FailoverConfig is required")}
	}
	return validateSpec(&fc.Spec, field.NewPath("spec"), fileHubs)
}

// validateSpec validates spec at path; fileHubs are the hubs switchTo may name besides the spec's.
func validateSpec(spec *FailoverConfigSpec, path *field.Path, fileHubs []string) field.ErrorList {
	var errs field.ErrorList

	hubsPath := path.Child("alternateHubs")
	if len(spec.AlternateHubs) > MaxAlternateHubs {
		errs = append(errs, field.TooMany(hubsPath, len(spec.AlternateHubs), MaxAlternateHubs))
	}
	seen := sets.New[string]()
	for i := range spec.AlternateHubs {
		hub := &spec.AlternateHubs[i]
		errs = append(errs, validateAlternateHub(hub, hubsPath.Index(i))...)
		if hub.Name == "" {
			continue
		}
		if seen.Has(hub.Name) {
			errs = append(errs, field.Duplicate(hubsPath.Index(i).Child("name"), hub.Name))
		}
		seen.Insert(hub.Name)
	}

	errs = append(errs, validateMinDuration(spec.HubConnectionTimeout, MinHubConnectionTimeout, path.Child("hubConnectionTimeout"))...)
	errs = append(errs, validateMinDuration(spec.HubRejectionGracePeriod, MinHubRejectionGracePeriod, path.Child("hubRejectionGracePeriod"))...)
	errs = append(errs, validateMinDuration(spec.FailedHubSkipPeriod, MinFailedHubSkipPeriod, path.Child("failedHubSkipPeriod"))...)
	errs = append(errs, validateMinDuration(spec.ProbeInterval, MinProbeInterval, path.Child("probeInterval"))...)

	known := append(spec.HubNames(), fileHubs...)
	for _, f := range []struct{ name, value string }{{"switchTo", spec.SwitchTo}, {"forceSwitch", spec.ForceSwitch}} {
		if f.value == "" || slices.Contains(known, f.value) {
			continue
		}
		supported := make([]string, 0, len(known))
		for _, name := range known {
			if name != "" && !slices.Contains(supported, name) {
				supported = append(supported, name)
			}
		}
		errs = append(errs, field.NotSupported(path.Child(f.name), f.value, supported))
	}

	if spec.Failback != nil {
		failbackPath := path.Child("failback")
		switch spec.Failback.Policy {
		case "", FailbackPolicyNone, FailbackPolicyPrimary:
		default:
			errs = append(errs, field.NotSupported(failbackPath.Child("policy"), spec.Failback.Policy,
				[]FailbackPolicy{FailbackPolicyNone, FailbackPolicyPrimary}))
		}
		errs = append(errs, validateMinDuration(spec.Failback.HealthyFor, MinFailbackHealthyFor, failbackPath.Child("healthyFor"))...)
	}
	return errs
}

// validateAlternateHub validates the name and Secret reference of one alternate hub at path; uniqueness is
// checked by the caller.
func validateAlternateHub(hub *AlternateHub, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	namePath := path.Child("name")
	switch {
	case hub.Name == "":
		errs = append(errs, field.Required(namePath, "the name of the alternate hub is required"))
	case hub.Name == HubNamePrimary:
		errs = append(errs, field.Invalid(namePath, hub.Name,
			fmt.Sprintf("%q is reserved for the hub of --bootstrap-kubeconfig", HubNamePrimary)))
	default:
		if msgs := validation.IsDNS1123Label(hub.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(namePath, hub.Name, strings.Join(msgs, "; ")))
		}
	}

	refPath := path.Child("bootstrapKubeconfigSecretRef")
	if hub.BootstrapKubeconfigSecretRef == "" {
		errs = append(errs, field.Required(refPath,
			fmt.Sprintf("the name of a Secret with key %q holding the hub's bootstrap kubeconfig is required", KubeconfigSecretKey)))
	} else if msgs := validation.IsDNS1123Subdomain(hub.BootstrapKubeconfigSecretRef); len(msgs) > 0 {
		errs = append(errs, field.Invalid(refPath, hub.BootstrapKubeconfigSecretRef, strings.Join(msgs, "; ")))
	}
	return errs
}

// validateMinDuration reports d at path when it is set and shorter than minimum; nil d (the default) passes.
func validateMinDuration(d *metav1.Duration, minimum time.Duration, path *field.Path) field.ErrorList {
	if d == nil || d.Duration >= minimum {
		return nil
	}
	return field.ErrorList{field.Invalid(path, d.Duration.String(), fmt.Sprintf("must be at least %s", minimum))}
}
