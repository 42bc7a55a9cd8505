//go:build idforge_static

package idforge

// libidforge.a by its path, with the system libraries Rust's std needs: the program loads no
// idforge file at run time.

// #cgo pkg-config: idforge-static
import "C"
