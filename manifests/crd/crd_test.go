package crd_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/klusterlet-failover/klusterlet-failover/manifests/crd"
	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// loadCRD decodes an embedded CRD with load (crd.FailoverConfigCRD or crd.ReplicationConfigCRD) and returns it
// with its only version's root schema.
func loadCRD(t *testing.T, load func() (*apiextensionsv1.CustomResourceDefinition, error)) (*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	c, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Schema == nil || c.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		t.Fatalf("want exactly one version with a schema, got %+v", c.Spec.Versions)
	}
	return c, c.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// schemaAt walks properties (and "[]" for array items) from root; it fails the test if the path is absent.
func schemaAt(t *testing.T, root *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	s := root
	for _, part := range strings.Split(path, ".") {
		if part == "[]" {
			if s.Items == nil || s.Items.Schema == nil {
				t.Fatalf("schema path %s: no items at %q", path, part)
			}
			s = s.Items.Schema
			continue
		}
		p, ok := s.Properties[part]
		if !ok {
			t.Fatalf("schema path %s: no property %q", path, part)
		}
		s = &p
	}
	return s
}

func TestEmbeddedFilesAreCRDs(t *testing.T) {
	names, err := fs.Glob(crd.FS, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{crd.FailoverConfigFileName, crd.ReplicationConfigFileName} {
		if !slices.Contains(names, want) {
			t.Fatalf("FS holds %v, want %s among them", names, want)
		}
	}
	for _, name := range names {
		data, err := crd.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.Kind != "CustomResourceDefinition" || c.Name != c.Spec.Names.Plural+"."+c.Spec.Group {
			t.Errorf("%s: kind %q name %q is not a well-formed CRD", name, c.Kind, c.Name)
		}
	}
}

func TestFailoverConfigCRDShape(t *testing.T) {
	c, root := loadCRD(t, crd.FailoverConfigCRD)
	if c.Name != "failoverconfigs."+failoverv1alpha1.GroupName || c.Spec.Group != failoverv1alpha1.GroupName {
		t.Errorf("name %q group %q", c.Name, c.Spec.Group)
	}
	if c.Spec.Names.Kind != "FailoverConfig" || c.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("kind %q scope %q, want FailoverConfig Namespaced", c.Spec.Names.Kind, c.Spec.Scope)
	}
	v := c.Spec.Versions[0]
	if v.Name != failoverv1alpha1.SchemeGroupVersion.Version || !v.Served || !v.Storage {
		t.Errorf("version %q served %v storage %v", v.Name, v.Served, v.Storage)
	}
	if v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("status subresource missing: %+v", v.Subresources)
	}
	type column struct{ Name, Type, JSONPath string }
	var columns []column
	for _, col := range v.AdditionalPrinterColumns {
		columns = append(columns, column{col.Name, col.Type, col.JSONPath})
	}
	wantColumns := []column{
		{"ActiveHub", "string", ".status.activeHub"},
		{"Available", "string", `.status.conditions[?(@.type=="Available")].status`},
		{"Failovers", "integer", ".status.failoverCount"},
		{"Age", "date", ".metadata.creationTimestamp"},
	}
	if diff := cmp.Diff(wantColumns, columns); diff != "" {
		t.Errorf("printer columns (-want +got):\n%s", diff)
	}

	hubs := schemaAt(t, root, "spec.alternateHubs")
	if hubs.MaxItems == nil || *hubs.MaxItems != failoverv1alpha1.MaxAlternateHubs {
		t.Errorf("alternateHubs maxItems = %v, want %d", hubs.MaxItems, failoverv1alpha1.MaxAlternateHubs)
	}
	lists := []struct {
		path string
		key  string
	}{
		{"spec.alternateHubs", "name"},
		{"status.conditions", "type"},
		{"status.hubs", "name"},
	}
	for _, l := range lists {
		s := schemaAt(t, root, l.path)
		if s.XListType == nil || *s.XListType != "map" || !slices.Equal(s.XListMapKeys, []string{l.key}) {
			t.Errorf("%s: list type %v keys %v, want map keyed by %s", l.path, s.XListType, s.XListMapKeys, l.key)
		}
	}
	if got := schemaAt(t, root, "spec.failback.policy").Enum; len(got) != 2 {
		t.Errorf("failback.policy enum = %v, want None and Primary", got)
	}
	if !slices.Equal(schemaAt(t, root, "spec.alternateHubs.[]").Required, []string{"bootstrapKubeconfigSecretRef", "name"}) {
		t.Errorf("alternateHubs items must require name and bootstrapKubeconfigSecretRef")
	}
}

// TestFailoverConfigCRDMatchesGoConstants keeps the schema defaults and CEL minimums in step with the
// Default*/Min* constants that WithDefaults and ValidateFailoverConfig use.
func TestFailoverConfigCRDMatchesGoConstants(t *testing.T) {
	_, root := loadCRD(t, crd.FailoverConfigCRD)
	cases := []struct {
		path     string
		def, min time.Duration
	}{
		{"spec.hubConnectionTimeout", failoverv1alpha1.DefaultHubConnectionTimeout, failoverv1alpha1.MinHubConnectionTimeout},
		{"spec.hubRejectionGracePeriod", failoverv1alpha1.DefaultHubRejectionGracePeriod, failoverv1alpha1.MinHubRejectionGracePeriod},
		{"spec.failedHubSkipPeriod", failoverv1alpha1.DefaultFailedHubSkipPeriod, failoverv1alpha1.MinFailedHubSkipPeriod},
		{"spec.probeInterval", failoverv1alpha1.DefaultProbeInterval, failoverv1alpha1.MinProbeInterval},
		{"spec.failback.healthyFor", failoverv1alpha1.DefaultFailbackHealthyFor, failoverv1alpha1.MinFailbackHealthyFor},
	}
	for _, tc := range cases {
		s := schemaAt(t, root, tc.path)
		if s.Type != "string" || s.Default == nil {
			t.Errorf("%s: type %q default %v, want a string with a default", tc.path, s.Type, s.Default)
			continue
		}
		var def string
		if err := yaml.Unmarshal(s.Default.Raw, &def); err != nil {
			t.Errorf("%s: default %s: %v", tc.path, s.Default.Raw, err)
			continue
		}
		if got, err := time.ParseDuration(def); err != nil || got != tc.def {
			t.Errorf("%s: default %q, want %s", tc.path, def, tc.def)
		}
		wantRule := fmt.Sprintf("duration(self) >= duration('%s')", tc.min)
		if len(s.XValidations) != 1 || s.XValidations[0].Rule != wantRule {
			t.Errorf("%s: validations %+v, want the single rule %q", tc.path, s.XValidations, wantRule)
		}
	}
	if s := schemaAt(t, root, "spec.failback.policy"); s.Default == nil || string(s.Default.Raw) != `"`+string(failoverv1alpha1.FailbackPolicyNone)+`"` {
		t.Errorf("failback.policy default = %v, want None", s.Default)
	}
}

// TestFailoverConfigCRDNamePatterns checks the schema patterns against apimachinery's DNS-1123 checks that
// ValidateFailoverConfig uses.
func TestFailoverConfigCRDNamePatterns(t *testing.T) {
	_, root := loadCRD(t, crd.FailoverConfigCRD)
	cases := []struct {
		path  string
		check func(string) []string
	}{
		{"spec.alternateHubs.[].name", validation.IsDNS1123Label},
		{"spec.alternateHubs.[].bootstrapKubeconfigSecretRef", validation.IsDNS1123Subdomain},
	}
	values := []string{"hub-b", "b", "0", "hub.b", "Hub-B", "-hub", "hub-", "hub_b", "a.b-c.d", "a..b", ".a",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a"}
	for _, tc := range cases {
		s := schemaAt(t, root, tc.path)
		re, err := regexp.Compile(s.Pattern)
		if err != nil || s.MaxLength == nil {
			t.Fatalf("%s: pattern %q (%v), maxLength %v", tc.path, s.Pattern, err, s.MaxLength)
		}
		for _, v := range values {
			schemaOK := re.MatchString(v) && int64(len(v)) <= *s.MaxLength
			goOK := len(tc.check(v)) == 0
			if schemaOK != goOK {
				t.Errorf("%s: %q accepted by schema %v, by apimachinery %v", tc.path, v, schemaOK, goOK)
			}
		}
	}
}

// TestFailoverConfigSwitchToSchema: spec.switchTo takes any DNS-1123 label, including a hub the agent has from a
// bootstrap kubeconfig file and the CRD cannot know (bootstrap-hub-b under the klusterlet operator), and the empty
// string; the agent checks the name against its hubs.
func TestFailoverConfigSwitchToSchema(t *testing.T) {
	_, root := loadCRD(t, crd.FailoverConfigCRD)
	spec := root.Properties["spec"]
	if len(spec.XValidations) != 0 {
		t.Errorf("spec has rules %v; switchTo must not be limited to the hubs the FailoverConfig lists", spec.XValidations)
	}
	s := spec.Properties["switchTo"]
	re, err := regexp.Compile(s.Pattern)
	if err != nil || s.MaxLength == nil || *s.MaxLength != 63 {
		t.Fatalf("spec.switchTo pattern %q (%v), maxLength %v; want a DNS-1123 label pattern and 63", s.Pattern, err, s.MaxLength)
	}
	for value, want := range map[string]bool{"": true, "primary": true, "hub-b": true, "bootstrap-hub-b": true,
		"Hub-B": false, "hub_b": false, "-hub": false, "hub.b": false} {
		if got := re.MatchString(value); got != want {
			t.Errorf("spec.switchTo %q accepted %v, want %v", value, got, want)
		}
	}
}

// TestFailoverConfigCRDValidationRules compiles every x-kubernetes-validations rule of the CRD with CEL and
// evaluates it on accepted and rejected values; a rule that errors (e.g. an unparsable duration) rejects, as
// on the API server. Every rule of the CRD must have cases here.
func TestFailoverConfigCRDValidationRules(t *testing.T) {
	_, root := loadCRD(t, crd.FailoverConfigCRD)
	type value struct {
		self any
		want bool
	}
	minCases := func(min string, below ...string) []value {
		v := []value{{min, true}, {"1h", true}, {"1h30m", true}, {"abc", false}, {"", false}, {"-1h", false}}
		for _, b := range below {
			v = append(v, value{b, false})
		}
		return v
	}
	cases := map[string][]value{
		"spec.hubConnectionTimeout":    minCases("10s", "9s", "9999ms", "0s"),
		"spec.hubRejectionGracePeriod": minCases("10s", "9s", "0s"),
		"spec.failedHubSkipPeriod":     minCases("10s", "9s", "0s"),
		"spec.probeInterval":           minCases("5s", "4s", "4999ms"),
		"spec.failback.healthyFor":     minCases("10s", "9s"),
		"spec.alternateHubs.[].name":   {{"hub-b", true}, {"primary-2", true}, {"primary", false}},
	}

	found := map[string]bool{}
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps) {
		for _, rule := range s.XValidations {
			found[path] = true
			values, ok := cases[path]
			if !ok {
				t.Errorf("%s: rule %q has no test cases", path, rule.Rule)
				continue
			}
			if rule.Message == "" {
				t.Errorf("%s: rule %q has no message", path, rule.Rule)
			}
			for _, v := range values {
				if got := evalRule(t, rule.Rule, s.Type, v.self); got != v.want {
					t.Errorf("%s: rule %q on %#v = %v, want %v", path, rule.Rule, v.self, got, v.want)
				}
			}
		}
		for name, p := range s.Properties {
			walk(strings.TrimPrefix(path+"."+name, "."), &p)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+".[]", s.Items.Schema)
		}
	}
	walk("", root)
	for path := range cases {
		if !found[path] {
			t.Errorf("%s: no x-kubernetes-validations rule in the CRD", path)
		}
	}
}

// evalRule compiles rule with self typed after the schema type and evaluates it on self; a compile error
// fails the test, an evaluation error counts as a rejection.
func evalRule(t *testing.T, rule, schemaType string, self any) bool {
	t.Helper()
	selfType := cel.DynType
	if schemaType == "string" {
		selfType = cel.StringType
	}
	env, err := cel.NewEnv(cel.Variable("self", selfType))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(rule)
	if iss.Err() != nil {
		t.Fatalf("rule %q does not compile: %v", rule, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatalf("rule %q: %v", rule, err)
	}
	out, _, err := prg.Eval(map[string]any{"self": self})
	if err != nil {
		return false
	}
	return out == types.True
}

func TestReplicationConfigCRDShape(t *testing.T) {
	c, root := loadCRD(t, crd.ReplicationConfigCRD)
	if c.Name != "replicationconfigs."+failoverv1alpha1.GroupName || c.Spec.Group != failoverv1alpha1.GroupName {
		t.Errorf("name %q group %q", c.Name, c.Spec.Group)
	}
	if c.Spec.Names.Kind != "ReplicationConfig" || c.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("kind %q scope %q, want ReplicationConfig Namespaced", c.Spec.Names.Kind, c.Spec.Scope)
	}
	v := c.Spec.Versions[0]
	if v.Name != failoverv1alpha1.SchemeGroupVersion.Version || !v.Served || !v.Storage {
		t.Errorf("version %q served %v storage %v", v.Name, v.Served, v.Storage)
	}
	if v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("status subresource missing: %+v", v.Subresources)
	}

	hubs := schemaAt(t, root, "spec.hubs")
	if hubs.MinItems == nil || *hubs.MinItems != failoverv1alpha1.MinReplicationHubs ||
		hubs.MaxItems == nil || *hubs.MaxItems != failoverv1alpha1.MaxReplicationHubs {
		t.Errorf("spec.hubs minItems %s maxItems %s, want %d and %d", optional(hubs.MinItems), optional(hubs.MaxItems),
			failoverv1alpha1.MinReplicationHubs, failoverv1alpha1.MaxReplicationHubs)
	}
	// Unique hub names on the server: a list of type map keyed by name.
	for _, l := range []struct{ path, key string }{
		{"spec.hubs", "name"},
		{"status.conditions", "type"},
		{"status.hubs", "name"},
		{"status.kinds", "kind"},
	} {
		s := schemaAt(t, root, l.path)
		if s.XListType == nil || *s.XListType != "map" || !slices.Equal(s.XListMapKeys, []string{l.key}) {
			t.Errorf("%s: list type %v keys %v, want map keyed by %s", l.path, s.XListType, s.XListMapKeys, l.key)
		}
	}
	required := []struct {
		path string
		want []string
	}{
		{"", []string{"spec"}},
		{"spec", []string{"hubs"}},
		{"spec.hubs.[]", []string{"kubeconfigSecret", "name"}},
		{"spec.hubs.[].kubeconfigSecret", []string{"name"}},
	}
	for _, r := range required {
		s := root
		if r.path != "" {
			s = schemaAt(t, root, r.path)
		}
		if !slices.Equal(s.Required, r.want) {
			t.Errorf("%q: required %v, want %v", r.path, s.Required, r.want)
		}
	}

	// spec.kinds: a set of known kinds, at most one of each (ValidateReplicationConfig: NotSupported, Duplicate).
	kinds := schemaAt(t, root, "spec.kinds")
	if kinds.XListType == nil || *kinds.XListType != "set" {
		t.Errorf("spec.kinds: list type %v, want set", kinds.XListType)
	}
	if kinds.MaxItems == nil || *kinds.MaxItems != int64(len(failoverv1alpha1.AllReplicatedKinds)) {
		t.Errorf("spec.kinds maxItems %s, want %d", optional(kinds.MaxItems), len(failoverv1alpha1.AllReplicatedKinds))
	}
	var wantEnum []string
	for _, k := range failoverv1alpha1.AllReplicatedKinds {
		wantEnum = append(wantEnum, string(k))
	}
	var enum []string
	for _, e := range schemaAt(t, root, "spec.kinds.[]").Enum {
		var s string
		if err := yaml.Unmarshal(e.Raw, &s); err != nil {
			t.Fatalf("spec.kinds.[]: enum value %s: %v", e.Raw, err)
		}
		enum = append(enum, s)
	}
	if diff := cmp.Diff(wantEnum, enum); diff != "" {
		t.Errorf("spec.kinds.[]: enum differs from AllReplicatedKinds (-want +got):\n%s", diff)
	}
	// status.kinds: every built-in kind and every custom kind (named "<resource>.<group>"), so no enum.
	statusKinds := schemaAt(t, root, "status.kinds")
	if want := int64(len(failoverv1alpha1.AllReplicatedKinds) + failoverv1alpha1.MaxCustomKinds); statusKinds.MaxItems == nil || *statusKinds.MaxItems != want {
		t.Errorf("status.kinds maxItems %s, want %d (every built-in and every custom kind)", optional(statusKinds.MaxItems), want)
	}
	if kind := schemaAt(t, root, "status.kinds.[].kind"); len(kind.Enum) != 0 {
		t.Errorf("status.kinds.[].kind has an enum %d values long: a custom kind's name would be refused", len(kind.Enum))
	}
	// spec.customKinds: at most MaxCustomKinds, the scopes those of CustomKindScope.
	custom := schemaAt(t, root, "spec.customKinds")
	if custom.MaxItems == nil || *custom.MaxItems != int64(failoverv1alpha1.MaxCustomKinds) {
		t.Errorf("spec.customKinds maxItems %s, want %d", optional(custom.MaxItems), failoverv1alpha1.MaxCustomKinds)
	}
	var scopes []string
	for _, e := range schemaAt(t, root, "spec.customKinds.[].scope").Enum {
		var s string
		if err := yaml.Unmarshal(e.Raw, &s); err != nil {
			t.Fatalf("spec.customKinds.[].scope: enum value %s: %v", e.Raw, err)
		}
		scopes = append(scopes, s)
	}
	wantScopes := []string{string(failoverv1alpha1.ScopeHubWide), string(failoverv1alpha1.ScopeClusterByName),
		string(failoverv1alpha1.ScopeClusterByNamespace), string(failoverv1alpha1.ScopeClusterByNamespaceIfCluster)}
	if diff := cmp.Diff(wantScopes, scopes); diff != "" {
		t.Errorf("spec.customKinds.[].scope: enum (-want +got):\n%s", diff)
	}

	// The key's default is what SecretKey returns for an empty key.
	key := schemaAt(t, root, "spec.hubs.[].kubeconfigSecret.key")
	if key.Default == nil || string(key.Default.Raw) != `"`+failoverv1alpha1.KubeconfigSecretKey+`"` {
		t.Errorf("kubeconfigSecret.key default = %v, want %q", key.Default, failoverv1alpha1.KubeconfigSecretKey)
	}
}

// optional formats a schema bound that may be unset.
func optional(n *int64) string {
	if n == nil {
		return "unset"
	}
	return fmt.Sprint(*n)
}

// schemaAccepts reports whether the string v passes s's pattern, minLength and maxLength.
func schemaAccepts(t *testing.T, path string, s *apiextensionsv1.JSONSchemaProps, v string) bool {
	t.Helper()
	re, err := regexp.Compile(s.Pattern)
	if err != nil || s.Pattern == "" || s.MaxLength == nil {
		t.Fatalf("%s: pattern %q (%v), maxLength %s: want a pattern and a maxLength", path, s.Pattern, err, optional(s.MaxLength))
	}
	if s.MinLength != nil && int64(len(v)) < *s.MinLength {
		return false
	}
	return re.MatchString(v) && int64(len(v)) <= *s.MaxLength
}

// TestReplicationConfigCRDNamePatterns checks the schema's patterns and lengths against the apimachinery checks
// that ValidateReplicationConfig uses. Secret keys are the one known difference: the pattern lets through ".",
// ".." and names starting with "..", which IsConfigMapKey (and so ValidateReplicationConfig, and the API server
// for a Secret's own keys) rejects; the replicator then reports the hub's kubeconfig as invalid.
func TestReplicationConfigCRDNamePatterns(t *testing.T) {
	_, root := loadCRD(t, crd.ReplicationConfigCRD)
	cases := []struct {
		path  string
		check func(string) []string
		// looser are the values the schema accepts and the Go check rejects.
		looser []string
	}{
		{path: "spec.hubs.[].name", check: validation.IsDNS1123Label},
		{path: "spec.hubs.[].kubeconfigSecret.name", check: validation.IsDNS1123Subdomain},
		{path: "spec.hubs.[].kubeconfigSecret.key", check: validation.IsConfigMapKey, looser: []string{".", "..", "..kubeconfig"}},
	}
	values := []string{"", "hub-b", "b", "0", "primary", "hub.b", "Hub-B", "-hub", "hub-", "hub_b", "a.b-c.d", "a..b", ".a",
		"kubeconfig", "hub-b.kubeconfig", "Kube_Config-1", "a/b", "a b", ".", "..", "..kubeconfig", ".kubeconfig",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a",
		strings.Repeat("k", 253), strings.Repeat("k", 254)}
	for _, tc := range cases {
		s := schemaAt(t, root, tc.path)
		for _, v := range values {
			schemaOK := schemaAccepts(t, tc.path, s, v)
			goOK := len(tc.check(v)) == 0
			if wantLooser := slices.Contains(tc.looser, v); schemaOK != goOK && !(wantLooser && schemaOK && !goOK) {
				t.Errorf("%s: %q accepted by schema %v, by apimachinery %v", tc.path, v, schemaOK, goOK)
			} else if wantLooser && schemaOK == goOK {
				t.Errorf("%s: %q now accepted by schema %v and by apimachinery %v alike: drop it from the known differences", tc.path, v, schemaOK, goOK)
			}
		}
	}
}

// TestReplicatorKustomizationHoldsTheGeneratedCRD keeps manifests/replicator's copy of the ReplicationConfig CRD
// (kustomize loads no file outside a kustomization's directory) identical to the generated one.
func TestReplicatorKustomizationHoldsTheGeneratedCRD(t *testing.T) {
	want, err := crd.FS.ReadFile(crd.ReplicationConfigFileName)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join("..", "replicator", crd.ReplicationConfigFileName)
	got, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatalf("reading the copy: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("manifests/replicator/%s differs from the generated manifests/crd/%[1]s; refresh it with\n  cp manifests/crd/%[1]s manifests/replicator/",
			crd.ReplicationConfigFileName)
	}
}
