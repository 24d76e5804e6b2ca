// Package roles is the old path of package groups/ownedpods: an owner of several
// roles whose pods it owns directly, with no child Jobs.
//
// Deprecated: import github.com/jobkit/jobkit/groups/ownedpods. This package
// only forwards to it and is removed in the next release.
package roles
