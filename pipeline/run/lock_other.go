//go:build !unix

package run

// lockRun is a no-op where flock is not available.
func lockRun(dir string) (func(), error) { return func() {}, nil }
