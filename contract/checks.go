package contract

// builtins are the built-in check types and their compilers.
var builtins = map[string]compiler{}
