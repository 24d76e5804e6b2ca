package envtesting

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequireInvalid fails the test unless err is the API server's Invalid error with
// a cause on field (exactly) whose message contains msg.
func RequireInvalid(t testing.TB, err error, field, msg string) {
	t.Helper()
	if err := invalidCause(err, field, msg, fieldIs); err != nil {
		t.Fatal(err)
	}
}

// RequireInvalidWithin is RequireInvalid for a cause whose field contains field:
// "spec.replicatedJobs" matches a cause on "spec.replicatedJobs[1].name".
func RequireInvalidWithin(t testing.TB, err error, field, msg string) {
	t.Helper()
	if err := invalidCause(err, field, msg, strings.Contains); err != nil {
		t.Fatal(err)
	}
}

func fieldIs(got, want string) bool { return got == want }

// invalidCause returns nil when err is an Invalid error with a cause whose field
// matches field and whose message contains msg, and otherwise says what err is.
func invalidCause(err error, field, msg string, match func(got, want string) bool) error {
	if err == nil {
		return fmt.Errorf("accepted; want Invalid on %s (%q)", field, msg)
	}
	var status *apierrors.StatusError
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.ErrStatus.Details == nil {
		return fmt.Errorf("error = %v, want Invalid on %s", err, field)
	}
	causes := status.ErrStatus.Details.Causes
	for _, c := range causes {
		if match(c.Field, field) && strings.Contains(c.Message, msg) {
			return nil
		}
	}
	return fmt.Errorf("error = %v\nwant a cause on field %s containing %q; causes: %s", err, field, msg, describeCauses(causes))
}

func describeCauses(causes []metav1.StatusCause) string {
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%s: %s", c.Field, c.Message)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// ObjectName turns a test's name (t.Name()) into an object name of at most max
// characters: lower-case letters, digits and dashes, from the end of the name
// (where subtests differ), without dashes at either end.
func ObjectName(testName string, max int) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(testName))
	if max > 0 && len(name) > max {
		name = name[len(name)-max:]
	}
	return strings.Trim(name, "-")
}
