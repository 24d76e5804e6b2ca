package explain

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
)

// diffStatus lists the fields of the Job status that differ between from and to.
// Nested objects are compared field by field; the conditions by type
// ("conditions[Complete].status"); other lists as a whole.
func diffStatus(from, to *batchv1.JobStatus) []FieldChange {
	a, b := flatten(from), flatten(to)
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []FieldChange
	for _, k := range keys {
		if a[k] != b[k] && zeroed(k, a[k]) != zeroed(k, b[k]) {
			out = append(out, FieldChange{Field: k, From: zeroed(k, a[k]), To: zeroed(k, b[k])})
		}
	}
	return out
}

// flatten maps each leaf of the status, as the API writes it in JSON, to its value.
func flatten(st *batchv1.JobStatus) map[string]string {
	raw, err := json.Marshal(st)
	if err != nil {
		// A JobStatus always marshals; keep the diff honest if it does not.
		return map[string]string{"": fmt.Sprintf("unmarshalable status: %v", err)}
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	out := map[string]string{}
	walk(out, "status", v)
	return out
}

func walk(out map[string]string, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			walk(out, path+"."+k, sub)
		}
	case []any:
		if keyed, ok := byType(x); ok {
			for t, sub := range keyed {
				walk(out, path+"["+t+"]", sub)
			}
			return
		}
		b, _ := json.Marshal(x)
		out[path] = string(b)
	default:
		b, _ := json.Marshal(x)
		out[path] = strings.Trim(string(b), `"`)
	}
}

// byType keys a list of objects by their "type" field (conditions), when every
// element has a distinct one.
func byType(xs []any) (map[string]any, bool) {
	if len(xs) == 0 {
		return nil, false
	}
	out := make(map[string]any, len(xs))
	for _, x := range xs {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		t, ok := m["type"].(string)
		if !ok {
			return nil, false
		}
		if _, dup := out[t]; dup {
			return nil, false
		}
		rest := make(map[string]any, len(m)-1)
		for k, v := range m {
			if k != "type" {
				rest[k] = v
			}
		}
		out[t] = rest
	}
	return out, true
}

// zeroed writes the counters that JSON omits when zero as 0.
func zeroed(field, v string) string {
	if v == "" && (field == "status.active" || field == "status.succeeded" || field == "status.failed") {
		return "0"
	}
	return v
}
