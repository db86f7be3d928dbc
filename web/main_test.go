package web_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedKeystone()
	os.Exit(code)
}
