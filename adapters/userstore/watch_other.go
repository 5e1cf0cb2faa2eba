//go:build !linux

package userstore

import "errors"

// folderWatch is Linux's inotify; elsewhere the store stats the file on
// every call.
type folderWatch struct{}

type watchResult int

const (
	quiet watchResult = iota
	changed
	lost
)

func watchFolder(string) (*folderWatch, error) {
	return nil, errors.New("no change watch on this system")
}

func (*folderWatch) poll() watchResult { return lost }
func (*folderWatch) close()            {}
