//go:build !idforge_static

package idforge

// The shared library: idforge.pc adds an rpath to its folder, so a program starts with no
// LD_LIBRARY_PATH. Build with -tags idforge_static to link libidforge.a instead.

// #cgo pkg-config: idforge
import "C"
