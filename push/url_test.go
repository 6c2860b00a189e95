package push

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/netguard"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://hooks.example.com/a2a", false, true},
		{"http://93.184.216.34:8080/x", false, true},
		{"http://127.0.0.1/x", false, false},
		{"http://127.0.0.1/x", true, true},
		{"http://localhost:8080/x", false, false},
		{"http://api.localhost/x", false, false},
		{"http://LOCALHOST./x", false, false},
		{"http://10.0.0.1/x", false, false},
		{"http://172.16.5.4/x", false, false},
		{"http://192.168.1.1/x", false, false},
		{"http://169.254.169.254/latest/meta-data", false, false},
		{"http://0.0.0.0/x", false, false},
		{"http://[::1]/x", false, false},
		{"http://[fe80::1]/x", false, false},
		{"http://[fd00::1]/x", false, false},
		{"http://[::ffff:127.0.0.1]/x", false, false},
		{"ftp://example.com/x", true, false},
		{"file:///etc/passwd", true, false},
		{"http:///nohost", true, false},
		{"", true, false},
		{"https://" + strings.Repeat("a", 3000) + ".com", false, false},
		// Every spelling a browser or resolver reads as an address.
		{"http://2130706433:8080/x", false, false},
		{"http://0x7f000001:8080/x", false, false},
		{"http://127.1:8080/x", false, false},
		{"http://0177.0.0.1/x", false, false},
		{"http://0x7f.1/x", false, false},
		{"http://127.0.0.1./x", false, false},
		{"http://0/x", false, false},
		{"http://0xa9fea9fe/latest/meta-data", false, false},
		{"http://100.100.100.200/x", false, false},
		{"http://1684301000/x", false, false},
		{"http://[64:ff9b::a9fe:a9fe]/x", false, false},
		{"http://[2002:7f00:1::]/x", false, false},
		{"http://[::127.0.0.1]/x", false, false},
		{"http://198.18.0.1/x", false, false},
		{"http://２１３０７０６４３３/x", false, false},
		{"http://134744072/x", false, true}, // 8.8.8.8
		{"http://2130706433:8080/x", true, true},
		// Not an address and not a name: refused whatever allowPrivate says.
		{"http://1.2.3.256/x", true, false},
		{"http://[fe80::1%25eth0]/x", true, false},
	} {
		_, err := ValidateURL(tc.url, tc.allowPrivate)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateURL(%q, allowPrivate=%v) = %v, want ok=%v", tc.url, tc.allowPrivate, err, tc.ok)
		}
	}
	if netguard.Check(netip.MustParseAddr("::ffff:10.0.0.1")) == nil || netguard.Check(netip.MustParseAddr("8.8.8.8")) != nil {
		t.Error("netguard.Check misclassifies mapped private or public addresses")
	}
}
