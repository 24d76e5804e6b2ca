package podoutcome_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

// FuzzOptionsValidate checks Options.Validate over arbitrary values: an error for a
// negative maxRevivals and for each negative timeout, under the given path, and
// nothing else.
func FuzzOptionsValidate(f *testing.F) {
	f.Add(0, int64(0), int64(0), int64(0), false)
	f.Add(-1, int64(-1), int64(time.Minute), int64(0), true)
	f.Add(3, int64(0), int64(-time.Hour), int64(-1), true)
	f.Fuzz(func(t *testing.T, maxRevivals int, unscheduled, pending, running int64, withPath bool) {
		o := podoutcome.Options{MaxRevivals: maxRevivals, Timeouts: plaindl.Timeouts{
			Unscheduled: time.Duration(unscheduled), Pending: time.Duration(pending), Running: time.Duration(running),
		}}
		var path *field.Path
		prefix := ""
		if withPath {
			path, prefix = field.NewPath("spec"), "spec."
		}
		var want []string
		if maxRevivals < 0 {
			want = append(want, prefix+"maxRevivals")
		}
		for _, f := range []struct {
			name string
			d    int64
		}{{"unscheduled", unscheduled}, {"pending", pending}, {"running", running}} {
			if f.d < 0 {
				want = append(want, prefix+"timeouts."+f.name)
			}
		}
		errs := o.Validate(path)
		if len(errs) != len(want) {
			t.Fatalf("%+v.Validate() = %v, want errors for %v", o, errs, want)
		}
		for i, e := range errs {
			if e.Field != want[i] || e.Type != field.ErrorTypeInvalid {
				t.Fatalf("%+v.Validate()[%d] = %v, want Invalid %s", o, i, e, want[i])
			}
		}
	})
}
