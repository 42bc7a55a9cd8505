module idforge.dev/idforge

// 1.24: the #cgo noescape and nocallback annotations, which keep the out-parameters of every
// call on the stack (no allocation per id).
go 1.24
