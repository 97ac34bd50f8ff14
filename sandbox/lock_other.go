//go:build !unix

package sandbox

// dirLock is a no-op where flock is not available.
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) unlock() {}
