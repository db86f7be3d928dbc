//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package store

import "errors"

func openBeacon(string) (*beacon, error) {
	return nil, errors.New("no shared memory mapping on this system")
}
