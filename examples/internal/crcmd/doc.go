// Package crcmd starts the controller-runtime manager of an example command from its
// common flags (cmdflags.Flags): the logger, the connection to the API server, the
// scheme and the manager's options, the same for every command built on
// controller-runtime (trainingjob-controller, jobset-controller and their --kueue
// variants in examples/kueue). It is a package of its own, not part of cmdflags, so
// that the client-go commands do not link controller-runtime's manager.
package crcmd
