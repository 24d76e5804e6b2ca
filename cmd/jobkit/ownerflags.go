package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/owner"
)

// owner reads --owner-kind, --owner-finalizer, --mapping and --map: the kind of
// the owner (the zero owner.Kind for a batch/v1 Job) and, into f.mapping, where it
// keeps a Job's fields.
func (f *cliFlags) owner() (owner.Kind, error) {
	kindFlag, finalizer := f.ownerKind, f.ownerFinalizer
	if f.mappingFile != "" {
		data, err := os.ReadFile(f.mappingFile)
		if err != nil {
			return owner.Kind{}, fmt.Errorf("--mapping: %w", err)
		}
		mf, err := explain.ParseMappingFile(f.mappingFile, data)
		if err != nil {
			return owner.Kind{}, fmt.Errorf("--mapping: %w", err)
		}
		if mf.OwnerKind != "" && !f.set["owner-kind"] {
			kindFlag = mf.OwnerKind
		}
		if mf.OwnerFinalizer != "" && !f.set["owner-finalizer"] {
			finalizer = mf.OwnerFinalizer
		}
		f.mapping = mf.Fields
	}
	for _, m := range f.maps {
		target, source, ok := strings.Cut(m, "=")
		if !ok || target == "" {
			return owner.Kind{}, fmt.Errorf("--map: %q is not JOBFIELD=FIELD (spec.completions=spec.workers), JOBFIELD==LITERAL or JOBFIELD=", m)
		}
		if f.mapping == nil {
			f.mapping = explain.Mapping{}
		}
		f.mapping[target] = source
	}
	if err := f.mapping.Validate(); err != nil {
		return owner.Kind{}, fmt.Errorf("--map: %w", err)
	}
	kind, err := parseOwnerKind(kindFlag, finalizer)
	if err != nil {
		return owner.Kind{}, err
	}
	if kind == (owner.Kind{}) && f.mapping != nil {
		return owner.Kind{}, errors.New("--map and --mapping read an owner of another kind: give its --owner-kind (a batch/v1 Job is read as it is)")
	}
	return kind, nil
}

// parseOwnerKind reads --owner-kind and --owner-finalizer. A batch/v1 Job is the
// zero owner.Kind (the explain package's default).
func parseOwnerKind(kindFlag, finalizer string) (owner.Kind, error) {
	parts := strings.Split(kindFlag, "/")
	var kind owner.Kind
	switch len(parts) {
	case 3:
		kind = owner.Kind{Group: parts[0], Version: parts[1], Kind: parts[2]}
	case 2:
		kind = owner.Kind{Version: parts[0], Kind: parts[1]}
	default:
		return kind, fmt.Errorf("--owner-kind: %q is not GROUP/VERSION/KIND (for example ml.examples.jobkit.dev/v1alpha1/TrainingJob, or batch/v1/Job)", kindFlag)
	}
	if kind.Group == owner.BatchJob.Group && kind.Kind == owner.BatchJob.Kind {
		if kind.Version != owner.BatchJob.Version {
			return kind, fmt.Errorf("--owner-kind: %q: batch Jobs are read as batch/v1", kindFlag)
		}
		if finalizer != "" && finalizer != owner.BatchJob.Finalizer {
			return kind, fmt.Errorf("--owner-finalizer: %q: batch/v1 Jobs are tracked by %s", finalizer, owner.BatchJob.Finalizer)
		}
		return owner.Kind{}, nil
	}
	// Check the kind with a valid finalizer, then the finalizer with a valid kind, so
	// that each error names its flag.
	if err := (owner.Kind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind, Finalizer: owner.BatchJob.Finalizer}).Validate(); err != nil {
		return kind, fmt.Errorf("--owner-kind: %q: %w", kindFlag, err)
	}
	if finalizer == "" {
		return kind, fmt.Errorf("--owner-finalizer: required with --owner-kind %s (the tracking finalizer its controller puts on its pods)", kindFlag)
	}
	kind.Finalizer = finalizer
	if err := (owner.Kind{Version: "v1", Kind: "Owner", Finalizer: finalizer}).Validate(); err != nil {
		return kind, fmt.Errorf("--owner-finalizer: %q: %w", finalizer, err)
	}
	return kind, nil
}
