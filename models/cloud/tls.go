package cloud

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v2"
)

// cloudsYAMLInsecure reads the `insecure` key of cloud name's clouds.yaml
// entry. The openstack CLI honours it (it wins over `verify` and `cacert`);
// gophercloud reads only `verify`. The file is found as both find it:
// OS_CLIENT_CONFIG_FILE, else ./clouds.yaml, the user's
// openstack/clouds.yaml, /etc/openstack/clouds.yaml.
func cloudsYAMLInsecure(name string, getenv func(string) string) bool {
	var paths []string
	if p := getenv("OS_CLIENT_CONFIG_FILE"); p != "" {
		paths = []string{p}
	} else {
		if wd, err := os.Getwd(); err == nil {
			paths = append(paths, filepath.Join(wd, "clouds.yaml"))
		}
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if home, err := os.UserHomeDir(); cfg == "" && err == nil {
			cfg = filepath.Join(home, ".config")
		}
		if cfg != "" {
			paths = append(paths, filepath.Join(cfg, "openstack", "clouds.yaml"))
		}
		paths = append(paths, "/etc/openstack/clouds.yaml")
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var doc struct {
			Clouds map[string]struct {
				Insecure any `yaml:"insecure"`
			} `yaml:"clouds"`
		}
		if yaml.Unmarshal(raw, &doc) != nil {
			return false // gophercloud reports the broken file
		}
		switch v := doc.Clouds[name].Insecure.(type) {
		case bool:
			return v
		case string:
			b, _ := strconv.ParseBool(v)
			return b
		}
		return false
	}
	return false
}

// tlsProblem is one line saying why a TLS connection was refused, or ""
// when err is not about TLS.
func tlsProblem(err error) string {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		return "its TLS certificate is signed by an authority corral does not trust: give the CA that signed it as cacert in clouds.yaml (or OS_CACERT)"
	case errors.As(err, &hostname):
		return fmt.Sprintf("its TLS certificate is not valid for %s (%s)", hostname.Host, clip(hostname.Error()))
	case errors.As(err, &invalid):
		return "its TLS certificate is not valid: " + clip(invalid.Error())
	case errors.As(err, &verify):
		return "its TLS certificate was refused: " + clip(verify.Err.Error())
	}
	return ""
}
