//go:build linux || darwin || freebsd || netbsd || openbsd

package store

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// openBeacon maps the counter file next to the SQLite database at path,
// creating it (readable by its owner only, like the database) if needed.
func openBeacon(path string) (*beacon, error) {
	name := path + "-revision"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const size = 8
	if fi.Size() < size {
		// Two processes may both grow it; growing to the same size
		// twice keeps whatever the first wrote.
		if err = f.Truncate(size); err != nil {
			return nil, err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", name, err)
	}
	// A mapping starts on a page boundary: the counter is aligned.
	return &beacon{
		counter: (*atomic.Uint64)(unsafe.Pointer(&mem[0])),
		unmap:   func() error { return syscall.Munmap(mem) },
	}, nil
}
