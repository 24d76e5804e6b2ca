// Package group is the old path of package groups/childjobs: the plan of one
// sync of a group of roles whose roles run as child batch/v1 Jobs.
//
// Deprecated: import github.com/jobkit/jobkit/groups/childjobs. This package
// only forwards to it and is removed in the next release.
package group
