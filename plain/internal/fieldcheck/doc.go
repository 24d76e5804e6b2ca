// Package fieldcheck builds and renders the fielderr.Error values of the plain
// validators: the error of a value outside a list, of a list too long, and a list of
// errors after the name of the package that found them.
//
// Invariants: none; nothing is validated here. Cost: linear in the values and the
// text. Every function is pure and safe for concurrent use.
package fieldcheck
