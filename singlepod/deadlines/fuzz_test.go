package deadlines_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/deadlines"
)

// FuzzValidate checks ValidateTimeouts over arbitrary durations: one error per
// negative timeout, each naming its field under the given path, none otherwise.
func FuzzValidate(f *testing.F) {
	f.Add(int64(0), int64(0), int64(0), false)
	f.Add(int64(-1), int64(time.Minute), int64(-time.Hour), true)
	f.Add(int64(-1<<63), int64(1<<63-1), int64(-1), true)
	f.Fuzz(func(t *testing.T, unscheduled, pending, running int64, withPath bool) {
		tm := plaindl.Timeouts{Unscheduled: time.Duration(unscheduled), Pending: time.Duration(pending), Running: time.Duration(running)}
		var path *field.Path
		prefix := ""
		if withPath {
			path, prefix = field.NewPath("spec", "timeouts"), "spec.timeouts."
		}
		var want []string
		for _, f := range []struct {
			name string
			d    int64
		}{{"unscheduled", unscheduled}, {"pending", pending}, {"running", running}} {
			if f.d < 0 {
				want = append(want, prefix+f.name)
			}
		}
		errs := deadlines.ValidateTimeouts(tm, path)
		if len(errs) != len(want) {
			t.Fatalf("ValidateTimeouts(%+v) = %v, want errors for %v", tm, errs, want)
		}
		for i, e := range errs {
			if e.Field != want[i] || e.Type != field.ErrorTypeInvalid || !strings.Contains(e.Detail, "negative") {
				t.Fatalf("ValidateTimeouts(%+v)[%d] = %v, want Invalid %s", tm, i, e, want[i])
			}
		}
	})
}
