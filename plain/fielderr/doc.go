// Package fielderr is the validation error of the plain packages (group,
// podfailurepolicy, successpolicy): the field of the input, the rule of the API
// server it breaks, and the API server's words for it, in a form the Kubernetes layer
// turns into apimachinery field errors without loss. Each of those packages returns a
// list of them (its Errors type); a caller tells the kinds apart by [Error.Type].
//
// Invariants: none beyond the fields; nothing is validated here. Cost: rendering is
// linear in the text. An Error holds plain data and is safe for concurrent use once
// built.
package fielderr
