package connectors

import "golang.org/x/sys/unix"

// onProcess reports whether path is on the kernel's process file systems
// (proc, sysfs): no person's file lives there, and keep's own process does
// (/proc/self/environ holds the credentials the config names by
// environment variable, /proc/self/mem all of them), so all of it is keep's
// whatever a root holds.
func onProcess(path string) bool {
	var fs unix.Statfs_t
	if unix.Statfs(path, &fs) != nil {
		return false
	}
	return fs.Type == unix.PROC_SUPER_MAGIC || fs.Type == unix.SYSFS_MAGIC
}
