// Package crd checks, when an example controller of a custom resource is set up,
// that the API server serves the resource, so that a cluster without the
// CustomResourceDefinition gets an error that names it and says how to install
// it, at once, instead of a manager that waits for its caches and then fails
// with "timed out waiting for cache to be synced".
//
// Require costs one discovery request the first time a RESTMapper is asked for
// a group (controller-runtime's mapper then caches it). It is safe for
// concurrent use when the RESTMapper is.
package crd
