package placementapi_test

import (
	"reflect"
	"strings"
	"testing"
)

// TestOpenStackClientResources drives osc-placement's resource commands
// against corral: inventories, usages, resource classes, traits and
// allocation candidates.
func TestOpenStackClientResources(t *testing.T) {
	requireCLI(t)
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()
	mustOSC := func(version string, args ...string) string {
		t.Helper()
		out, errOut, err := a.osc(t, version, args...)
		if err != nil {
			t.Fatalf("openstack %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
	mustOSC("1.39", "resource", "provider", "inventory", "set", root1,
		"--resource", "VCPU=8", "--resource", "VCPU:allocation_ratio=2.0", "--resource", "MEMORY_MB=4096")
	got := lines(mustOSC("1.39", "resource", "provider", "inventory", "list", root1, "-f", "value", "-c", "resource_class", "-c", "total"))
	if !reflect.DeepEqual(got, []string{"MEMORY_MB 4096", "VCPU 8"}) {
		t.Errorf("inventory list: %v", got)
	}
	mustOSC("1.39", "resource", "provider", "inventory", "delete", root1, "--resource-class", "MEMORY_MB")
	got = lines(mustOSC("1.39", "resource", "provider", "inventory", "list", root1, "-f", "value", "-c", "resource_class"))
	if !reflect.DeepEqual(got, []string{"VCPU"}) {
		t.Errorf("after inventory delete: %v", got)
	}

	// A consumer's allocation shows in the usages.
	a.must(204, "PUT", "/allocations/c0c0c0c0-0000-4000-8000-000000000001", "1.39", map[string]any{
		"allocations": map[string]any{root1: map[string]any{"resources": map[string]any{"VCPU": 3}}},
		"project_id":  "proj-a", "user_id": "user-a", "consumer_generation": nil, "consumer_type": "INSTANCE"})
	got = lines(mustOSC("1.39", "resource", "provider", "usage", "show", root1, "-f", "value"))
	if !reflect.DeepEqual(got, []string{"VCPU 3"}) {
		t.Errorf("provider usage show: %v", got)
	}
	got = lines(mustOSC("1.9", "resource", "usage", "show", "proj-a", "-f", "value"))
	if !reflect.DeepEqual(got, []string{"VCPU 3"}) {
		t.Errorf("resource usage show: %v", got)
	}

	// Resource classes and traits.
	mustOSC("1.39", "resource", "class", "create", "CUSTOM_FPGA")
	if out := mustOSC("1.39", "resource", "class", "list", "-f", "value"); !strings.Contains(out, "CUSTOM_FPGA") || !strings.Contains(out, "VCPU") {
		t.Errorf("class list: %s", out)
	}
	mustOSC("1.39", "resource", "class", "delete", "CUSTOM_FPGA")
	if out := mustOSC("1.39", "resource", "class", "list", "-f", "value"); strings.Contains(out, "CUSTOM_FPGA") {
		t.Errorf("class still listed: %s", out)
	}
	mustOSC("1.39", "trait", "create", "CUSTOM_GOLD")
	if out := mustOSC("1.39", "trait", "list", "-f", "value"); !strings.Contains(out, "CUSTOM_GOLD") || !strings.Contains(out, "HW_CPU_X86_AVX2") {
		t.Errorf("trait list: %.200s", out)
	}
	mustOSC("1.39", "resource", "provider", "trait", "set", root1, "--trait", "CUSTOM_GOLD", "--trait", "HW_CPU_X86_AVX2")
	got = lines(mustOSC("1.39", "resource", "provider", "trait", "list", root1, "-f", "value"))
	if !reflect.DeepEqual(got, []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}) {
		t.Errorf("provider trait list: %v", got)
	}

	// Allocation candidates: root1 has VCPU 16 - 3 left.
	out := mustOSC("1.39", "allocation", "candidate", "list", "--resource", "VCPU=4", "--required", "CUSTOM_GOLD", "-f", "value", "-c", "resource provider")
	if got := lines(out); !reflect.DeepEqual(got, []string{root1}) {
		t.Errorf("allocation candidate list: %v", got)
	}
	if out := mustOSC("1.39", "allocation", "candidate", "list", "--resource", "VCPU=14", "-f", "value"); strings.TrimSpace(out) != "" {
		t.Errorf("over capacity: %q", out)
	}
	mustOSC("1.39", "resource", "provider", "trait", "delete", root1)
	mustOSC("1.39", "trait", "delete", "CUSTOM_GOLD")
	if out := mustOSC("1.39", "trait", "list", "-f", "value"); strings.Contains(out, "CUSTOM_GOLD") {
		t.Errorf("trait still listed")
	}
}
