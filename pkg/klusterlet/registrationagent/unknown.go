package registrationagent

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
)

// ReasonOperatorFlagIgnored (Warning, once per flag at start): the command line carries a flag, or a feature
// gate, that this agent does not implement — typically rendered by a klusterlet operator newer than the OCM
// release this agent follows — and the agent runs without it.
const ReasonOperatorFlagIgnored = "OperatorFlagIgnored"

// unsafeFlagWords are the words (dash-separated parts of a flag name) that mark an unknown flag as one that
// chooses how, or with which credentials, the agent authenticates with a hub: a registration driver, an
// authentication mode, a bootstrap or hub kubeconfig, gRPC or AWS IAM registration, tokens, credentials.
// Ignoring such a flag would register with credentials the operator did not ask for, so it is refused.
var unsafeFlagWords = []string{"auth", "driver", "bootstrap", "kubeconfig", "kubeconfigs", "grpc", "arn", "token", "credential", "credentials"}

// IgnoredFlag is a flag on the command line that this agent does not implement and runs without.
type IgnoredFlag struct {
	// Name is the flag as written, with its dashes ("--some-flag"), or "--feature-gates=<Gate>" for a feature
	// gate this agent does not know.
	Name string
	// Value is the flag's value as written ("" when it had none).
	Value string
}

// String returns name=value, or the name alone when there is no value.
func (f IgnoredFlag) String() string {
	if f.Value == "" {
		return f.Name
	}
	return f.Name + "=" + f.Value
}

// ClassifyUnknownFlags applies the unknown-flag policy to args, the command-line words the flag parser did not
// know (pflag's PassUnknownFlagToArgs puts them, in order, among the positional arguments: "--name=value", or
// "--name" followed by its value as a separate word). A word starting with "-" is a flag; without "=", the next
// word is its value when it does not start with "-" (the operator renders no positional arguments, so a bare
// word is a value). A word that no flag precedes is ignored as a stray argument.
//
// An unknown flag whose name contains one of the words auth, driver, bootstrap, kubeconfig(s), grpc, arn, token
// or credential(s) is refused: the returned error lists each such flag with its value and that rule. Every
// other unknown flag is returned, to be ignored with a log line and a Warning event (WarnIgnored).
func ClassifyUnknownFlags(args []string) ([]IgnoredFlag, error) {
	var ignored []IgnoredFlag
	var errs []error
	for i := 0; i < len(args); i++ {
		word := args[i]
		if !strings.HasPrefix(word, "-") || word == "-" || word == "--" {
			ignored = append(ignored, IgnoredFlag{Name: "argument " + strconv.Quote(word)})
			continue
		}
		name, value, hasValue := strings.Cut(word, "=")
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			value = args[i+1]
			i++
		}
		if word := unsafeWord(name); word != "" {
			errs = append(errs, fmt.Errorf("%s %q: not supported by klusterlet-failover, and not ignored: an unknown flag whose name contains %q may choose how, or with which credentials, the agent registers with a hub (klusterlet-failover registers with client certificates through CSRs, from --bootstrap-kubeconfig or --bootstrap-kubeconfigs)",
				name, value, word))
			continue
		}
		ignored = append(ignored, IgnoredFlag{Name: name, Value: value})
	}
	return ignored, errors.Join(errs...)
}

// unsafeWord returns the first of unsafeFlagWords among the dash-separated parts of the flag name (dashes
// included, any case), or "".
func unsafeWord(name string) string {
	for _, part := range strings.Split(strings.ToLower(strings.TrimLeft(name, "-")), "-") {
		for _, w := range unsafeFlagWords {
			if part == w {
				return w
			}
		}
	}
	return ""
}

// LogIgnored writes one log line per ignored flag, naming it, its value and what the operator asked for.
func LogIgnored(flags []IgnoredFlag) {
	for _, f := range flags {
		klog.Warning(ignoredMessage(f))
	}
}

// WarnIgnored emits one ReasonOperatorFlagIgnored Warning event per ignored flag on recorder.
func WarnIgnored(recorder events.Recorder, flags []IgnoredFlag) {
	for _, f := range flags {
		recorder.Warning(ReasonOperatorFlagIgnored, ignoredMessage(f))
	}
}

func ignoredMessage(f IgnoredFlag) string {
	return fmt.Sprintf("Ignoring %q: the klusterlet operator asked the registration agent for it, and klusterlet-failover does not implement it; the agent runs without it (registration, rotation, status, lease and failover are unaffected)", f.String())
}

// featureGatesFlag is OCM's --feature-gates ("Name=bool,..."): the gates this agent's FeatureGates know are set
// on it (an invalid value is an error, as in OCM); the names it does not know are recorded in unknown and
// ignored, as a newer operator may render gates of a newer OCM.
type featureGatesFlag struct {
	gates   featuregate.MutableFeatureGate
	unknown *[]IgnoredFlag
	raw     string
}

var _ pflag.Value = &featureGatesFlag{}

func (f *featureGatesFlag) String() string { return f.raw }

func (f *featureGatesFlag) Type() string { return "mapStringBool" }

// Set parses value, "Name=bool" pairs separated by commas, and returns an error naming the pair when a value
// is not a bool or a known gate cannot be set.
func (f *featureGatesFlag) Set(value string) error {
	known := f.gates.GetAll()
	m := map[string]bool{}
	for _, kv := range strings.Split(value, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return fmt.Errorf("%q: missing bool value for feature gate %s (want Name=true or Name=false)", kv, k)
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q: the value of feature gate %s must be true or false", kv, k)
		}
		if _, isKnown := known[featuregate.Feature(k)]; !isKnown {
			*f.unknown = append(*f.unknown, IgnoredFlag{Name: "--feature-gates=" + k, Value: strconv.FormatBool(b)})
			continue
		}
		m[k] = b
	}
	if f.raw == "" {
		f.raw = value
	} else {
		f.raw += "," + value
	}
	return f.gates.SetFromMap(m)
}

// knownFeatureGates returns the names of gates, sorted, for the flag's help.
func knownFeatureGates(gates featuregate.MutableFeatureGate) []string {
	var names []string
	for name := range gates.GetAll() {
		names = append(names, string(name))
	}
	sort.Strings(names)
	return names
}
