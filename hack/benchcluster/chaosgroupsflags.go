package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// chaosGroupOptions are the flags of the groups' part of `benchcluster chaos`.
type chaosGroupOptions struct {
	jobset     string   // the JobSet controller (examples/jobset/upstream/cmd/jobset-controller)
	groupCRDs  []string // the JobSet CRDs to apply
	groups     int
	groupKills int
}

func (o *chaosGroupOptions) registerGroupFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.jobset, "jobset", "", "the JobSet controller binary (examples/jobset/upstream/cmd/jobset-controller: --api picks the API); required with --groups above 0")
	fs.Func("group-crds", "comma-separated CRD files applied before the groups (the example's and JobSet's JobSet CRDs)", func(s string) error {
		o.groupCRDs = strings.Split(s, ",")
		return nil
	})
	fs.IntVar(&o.groups, "groups", 18, "JobSets in the groups' part, run after the Jobs' (0: none), the shapes in turn; the smoke runs 1")
	fs.IntVar(&o.groupKills, "group-kills", 24, "SIGKILLs of the groups' part, each of a controller drawn (jobkit-clientgo or a JobSet controller); the smoke kills each once")
}

func (o *chaosGroupOptions) checkGroupFlags() error {
	switch {
	case o.groups < 0:
		return fmt.Errorf("--groups=%d: must not be negative", o.groups)
	case o.groupKills < 0:
		return fmt.Errorf("--group-kills=%d: must not be negative", o.groupKills)
	case o.groups > 0 && o.jobset == "":
		return errors.New("--jobset is required with --groups above 0")
	}
	return nil
}
