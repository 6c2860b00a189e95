package exec

// SetAfterStart sets the hook that runs between a command's start and the
// moment its group is known; nil removes it.
func SetAfterStart(f func()) { afterStart = f }
