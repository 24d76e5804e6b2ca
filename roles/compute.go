package roles

import (
	"errors"
)

// Compute decides one sync of a Workload. It is pure: it reads in, performs no
// I/O, reads no clock and modifies neither the owner nor the pods.
//
// Not implemented yet: it returns an error (the implementation lands with issue
// 22's first step).
func Compute(in Input) (*Plan, error) {
	return nil, errors.New("roles.Compute: not implemented yet")
}
